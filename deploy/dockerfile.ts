/**
 * Reads a Dockerfile and a .dockerignore, for the test that runs the image's own commands without
 * a container runtime (dockerfile.test.ts). Only the forms this repository's Dockerfile uses.
 */
import { matchesGlob } from "node:path";

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  name: string | undefined;
  base: string;
  instructions: Instruction[];
}

/** Instructions with their continuation lines joined; comments and blank lines left out. */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending: { text: string; line: number } | undefined;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (!pending && (line === "" || line.startsWith("#"))) return;
    if (pending && line.startsWith("#")) return;
    const continues = line.endsWith("\\");
    const part = continues ? line.slice(0, -1).trim() : line;
    pending = pending ? { text: `${pending.text} ${part}`, line: pending.line } : { text: part, line: index + 1 };
    if (continues) return;
    const [, keyword, args] = /^(\w+)\s+(.*)$/.exec(pending.text) ?? [];
    if (!keyword) throw new Error(`Dockerfile line ${pending.line}: cannot read "${pending.text}"`);
    instructions.push({ keyword: keyword.toUpperCase(), args: args!.trim(), line: pending.line });
    pending = undefined;
  });
  return instructions;
}

/** The stages, each from its FROM (`FROM image [AS name]`). */
export function stagesOf(instructions: readonly Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === "FROM") {
      const [base, as, name] = instruction.args.split(/\s+/);
      stages.push({ base: base!, name: as?.toUpperCase() === "AS" ? name : undefined, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`Dockerfile line ${instruction.line}: ${instruction.keyword} before FROM`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

/** The arguments of the exec form (`["node", "server/main.ts"]`); undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith("[")) return undefined;
  const parsed = JSON.parse(args) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((arg) => typeof arg === "string"))
    throw new Error(`not an exec form: ${args}`);
  return parsed;
}

/** `--name=value` options, then the rest: `COPY --from=build --chown=node:node a b ./`. */
export function options(args: string): { options: Record<string, string>; rest: string[] } {
  const found: Record<string, string> = {};
  const words = args.split(/\s+/);
  while (words[0]?.startsWith("--")) {
    const [name, value = ""] = words.shift()!.slice(2).split("=", 2) as [string, string?];
    found[name] = value;
  }
  return { options: found, rest: words };
}

/** `ENV A=1 B=2`: unquoted values only. */
export function envPairs(args: string): Array<[string, string]> {
  return args.split(/\s+/).map((pair) => {
    const [, name, value] = /^(\w+)=(\S*)$/.exec(pair) ?? [];
    if (!name) throw new Error(`ENV ${args}: only NAME=value pairs without quotes are read here`);
    return [name, value!];
  });
}

/**
 * Whether .dockerignore leaves `path` (relative to the context, `/`-separated) out of the build
 * context: a pattern matches the path or one of its parent directories. Exceptions (`!`) are
 * not read here, and refused.
 */
export function dockerignore(text: string): (path: string) => boolean {
  const patterns = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => line.replace(/^\/+|\/+$/g, ""));
  if (patterns.some((pattern) => pattern.startsWith("!")))
    throw new Error(".dockerignore: exceptions (!) are not read here");
  return (path) => {
    const parts = path.split("/");
    return parts.some((_, index) => {
      const prefix = parts.slice(0, index + 1).join("/");
      return patterns.some((pattern) => matchesGlob(prefix, pattern));
    });
  };
}
