import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { measure } from "./lib/load.ts";
import { OPERATIONS } from "./lib/operations.ts";
import { startRealServer } from "./lib/targets.ts";
import { prepareTenant } from "./lib/tenant.ts";

const FIRST = 10_000;
const TOTAL = 100_000;
const TOLERANCE = 0.1;

/** Asks the server's probe (bench/servers/probe.ts) for its RSS after a full GC. */
async function rssOf(child: ChildProcess): Promise<{ rss: number; gc: boolean }> {
  const reply = once(child, "message") as Promise<[{ rss: number; gc: boolean }]>;
  child.send("rss");
  return (await reply)[0];
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/**
 * RSS of the real server (PGlite in memory) after 10,000 and after 100,000 requests of
 * GET /streams?limit=20 and GET /streams/{id} in turn, each sample taken after a forced GC.
 * Fails when the second exceeds the first by more than 10 %.
 */
export async function memoryCheck({
  connections,
}: {
  connections: number;
}): Promise<{ ok: boolean; report: Record<string, unknown> }> {
  const server = await startRealServer({
    databaseUrl: "memory:",
    label: "real server (PGlite)",
    nodeArgs: ["--expose-gc"],
    probe: true,
  });
  try {
    const tenant = await prepareTenant(server);
    const requests = OPERATIONS.filter((operation) => operation.id === "list" || operation.id === "get").flatMap(
      (operation) => operation.requests(server, tenant),
    );
    const first = await measure({ url: server.url, requests, connections, amount: FIRST });
    const afterFirst = await rssOf(server.child.process);
    const rest = await measure({ url: server.url, requests, connections, amount: TOTAL - FIRST });
    const afterTotal = await rssOf(server.child.process);
    const ratio = afterTotal.rss / afterFirst.rss;
    const ok = ratio <= 1 + TOLERANCE && first.non2xx + rest.non2xx === 0;
    console.log(
      `Memory check: real server on PGlite in memory, ${connections} connections, GET /streams?limit=20 and GET /streams/{id} in turn`,
    );
    console.log(`  RSS after ${FIRST.toLocaleString("en")} requests:  ${mib(afterFirst.rss)}`);
    console.log(`  RSS after ${TOTAL.toLocaleString("en")} requests: ${mib(afterTotal.rss)}`);
    console.log(
      `  ratio ${ratio.toFixed(3)} (limit ${1 + TOLERANCE}): ${ok ? "within" : "OVER"} 10 %${afterTotal.gc ? ", each sample after a forced full GC (--expose-gc)" : ""}`,
    );
    if (first.non2xx + rest.non2xx > 0) console.log(`  ${first.non2xx + rest.non2xx} responses were not 2xx`);
    return {
      ok,
      report: {
        requests: { first: FIRST, total: TOTAL },
        rssBytes: { first: afterFirst.rss, total: afterTotal.rss },
        ratio,
        forcedGc: afterTotal.gc,
        non2xx: first.non2xx + rest.non2xx,
        ok,
      },
    };
  } finally {
    await server.stop();
  }
}
