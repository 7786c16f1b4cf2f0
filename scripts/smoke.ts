/**
 * `npm run smoke`: the toolkit on the Node that runs it, quickly (.ci/run runs it on Node 26
 * after the whole suite on Node 24). The server started as `npm start` starts it (plain node, the
 * embedded database in memory); a few calls with the demo key it prints; the SDK built, packed,
 * installed from its tarball into an empty project and used from there against the server; then
 * SIGTERM, which must stop the server cleanly (exit 0). Prints one line per step; exits 1 on the
 * first failure.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand, sdkConsumerProject } from "./partner-sandbox.ts";
import { runServer, serverOrigin, stop } from "../testkit/server-process.ts";

const server = runServer({ DATABASE_URL: "memory:", LOG_LEVEL: "warn" });
const steps: string[] = [];
function step(name: string, ok: boolean, detail = ""): void {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? `: ${detail}` : ""}`);
  if (!ok) throw new Error(`${name} failed${detail ? `: ${detail}` : ""}`);
  steps.push(name);
}

/** The SDK from the installed package, as a partner's plain ES module uses it. */
const CONSUMER = `
import { createClient } from "@live-stream-hosting/sdk";
const client = createClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
const { creators } = await client.creators.list();
const stream = await client.streams.create({ creator_id: creators[0].id, product_name: "Smoke test", platform: "youtube" });
const listed = await client.streams.list({ limit: 5 });
const ended = await client.streams.end(stream.stream_id);
console.log(JSON.stringify({ creators: creators.length, listed: listed.total, ended: ended.status }));
`;

let failed = false;
let consumer: Awaited<ReturnType<typeof sdkConsumerProject>> | undefined;
try {
  console.log(`Node ${process.version}`);
  const origin = await serverOrigin(server);
  const [, key] = await server.waitFor(/\b(svc_test_[0-9A-Za-z]{32})\b/);
  const auth = { authorization: `Bearer ${key}` };
  const readyz = await fetch(`${origin}/readyz`);
  step("GET /readyz", readyz.status === 200, String(readyz.status));
  const discovery = await fetch(`${origin}/api/v1/`);
  step("GET /api/v1/ (discovery)", discovery.status === 200, String(discovery.status));
  const docs = await fetch(`${origin}/docs`);
  step(
    "GET /docs",
    docs.status === 200 && (docs.headers.get("content-type") ?? "").startsWith("text/html"),
    String(docs.status),
  );
  const creators = (await (await fetch(`${origin}/api/v1/creators`)).json()) as { creators: { id: string }[] };
  const created = await fetch(`${origin}/api/v1/streams`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ creator_id: creators.creators[0]!.id, product_name: "Smoke test", platform: "twitch" }),
  });
  step("POST /api/v1/streams", created.status === 201, String(created.status));
  const list = await fetch(`${origin}/api/v1/streams?limit=5`, { headers: auth });
  step(
    "GET /api/v1/streams",
    list.status === 200 && ((await list.json()) as { total: number }).total === 1,
    String(list.status),
  );

  consumer = await sdkConsumerProject("lsh-smoke-");
  step(`SDK ${consumer.name} ${consumer.version} installed from its tarball into an empty project`, true);
  writeFileSync(join(consumer.dir, "consumer.mjs"), CONSUMER);
  const used = await runCommand(process.execPath, ["consumer.mjs"], {
    cwd: consumer.dir,
    env: { BASE_URL: `${origin}/api/v1`, API_KEY: key! },
  });
  step(
    "the installed SDK: creators, create, list, end",
    used.code === 0 && /"ended":"ended"/.test(used.stdout),
    used.output.trim(),
  );
} catch (error) {
  failed = true;
  console.error(`${(error as Error).message}\n--- server output ---\n${server.stdout()}${server.stderr()}`);
} finally {
  consumer?.remove();
  await stop(server, "SIGTERM");
}
const { code } = await server.exited;
if (!failed) step("SIGTERM: the server stops cleanly", code === 0 && /Stopped\./.test(server.stdout()), `exit ${code}`);
console.log(`smoke on Node ${process.version}: ${failed ? "FAILED" : `${steps.length} steps passed`}`);
process.exitCode = failed ? 1 : 0;
