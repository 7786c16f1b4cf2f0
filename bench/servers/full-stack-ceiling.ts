import { randomBytes } from "node:crypto";
import { loadConfig } from "../../server/config.ts";
import { createRuntime, openConfiguredDatabase } from "../../server/runtime.ts";
import { OPERATIONS } from "../lib/operations.ts";
import { sendOnce } from "../lib/send-once.ts";
import { stubDatabase } from "../lib/stub-database.ts";
import type { RealServer } from "../lib/targets.ts";
import { prepareTenant } from "../lib/tenant.ts";

/**
 * The full-stack ceiling: the server's own pipeline (server/runtime.ts and server/app.ts, exactly
 * as `npm start` builds them, with the request log at the configured level and metrics when
 * METRICS_TOKEN is set) in front of a stub database that answers the rows it recorded at once
 * (bench/lib/stub-database.ts). It sets up its own benchmark brand on the engine DATABASE_URL
 * names, sends each operation once to record the answers, then stops touching the database.
 * Prints {"port", "tenant", "adminToken"} once it answers from memory. No background jobs.
 */
const config = loadConfig({ ...process.env, PORT: "0", ADMIN_TOKEN: randomBytes(24).toString("hex") });
const stub = stubDatabase(await openConfiguredDatabase(config));
const runtime = await createRuntime(config, { db: stub, background: false });
const { port } = await runtime.start({ port: 0, host: "127.0.0.1" });
const server = { url: `http://127.0.0.1:${port}`, prefix: "/api/v1", adminToken: config.adminToken! } as RealServer;
const tenant = await prepareTenant(server);
for (const operation of OPERATIONS) await sendOnce(server, tenant, operation);
stub.answerFromMemory();
// Once more from memory: an operation the stub cannot answer fails here, not in the rounds.
for (const operation of OPERATIONS) await sendOnce(server, tenant, operation);
if (stub.unknown() > 0) throw new Error(`the stub was asked ${stub.unknown()} statements it never recorded`);
console.log(JSON.stringify({ port, tenant }));
process.once("SIGTERM", () => runtime.stop().then(() => process.exit(0)));
