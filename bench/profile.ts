import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Hotspot {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Self time per function of a `--cpu-prof` profile, largest first (idle and GC kept: they are part of the story). */
export function hotspots(file: string, top = 25): Hotspot[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, Hotspot>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const delta = (profile.timeDeltas[index] ?? 0) / 1000;
    total += delta;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url ? `${relative(ROOT, url.replace(/^file:\/\//, ""))}:${lineNumber + 1}` : "";
    const name = functionName || "(anonymous)";
    const key = `${name} ${where}`;
    const entry = self.get(key) ?? { name, where, selfMs: 0, share: 0 };
    entry.selfMs += delta;
    self.set(key, entry);
  });
  return [...self.values()]
    .map((entry) => ({ ...entry, share: entry.selfMs / total }))
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, top);
}

/** Where the self time went, by package (node_modules/<name>), by folder of ours, or by kind (wasm, node internals, idle, GC). */
export function byArea(file: string): Hotspot[] {
  const entries = hotspots(file, Number.POSITIVE_INFINITY);
  const areas = new Map<string, Hotspot>();
  for (const entry of entries) {
    const area = areaOf(entry);
    const sum = areas.get(area) ?? { name: area, where: "", selfMs: 0, share: 0 };
    sum.selfMs += entry.selfMs;
    sum.share += entry.share;
    areas.set(area, sum);
  }
  return [...areas.values()].sort((a, b) => b.selfMs - a.selfMs);
}

function areaOf({ name, where }: Hotspot): string {
  if (where.startsWith("wasm:")) return "PGlite (WebAssembly)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1];
  if (pkg) return pkg === "@electric-sql" ? "@electric-sql/pglite" : pkg;
  if (where.startsWith("node:")) return "node internals";
  if (where === "") return name.startsWith("(") ? name : "node internals (native)";
  return where.split("/").slice(0, 2).join("/").replace(/:\d+$/, "");
}

export function formatHotspots(entries: Hotspot[]): string {
  return entries
    .map(
      (entry) =>
        `${(entry.share * 100).toFixed(1).padStart(5)}% ${entry.selfMs.toFixed(0).padStart(7)} ms  ${entry.name}  ${entry.where}`,
    )
    .join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error("usage: tsx bench/profile.ts <file.cpuprofile> [top=25]");
    process.exit(2);
  }
  console.log(
    `By area:\n${formatHotspots(byArea(file))}\n\nBy function:\n${formatHotspots(hotspots(file, top ? Number(top) : 25))}`,
  );
}
