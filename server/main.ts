import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createApp } from "./app.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { simulatedAgentProvider } from "./providers/simulated-agent.ts";
import { httpsTransport } from "./providers/webhook-transport.ts";
import { sweepDueStreams } from "./services/lifecycle.ts";
import { seedDemoBrand } from "./services/operator.ts";
import { seedCreators } from "./store/creators.ts";
import { openDatabase } from "./store/database.ts";
import { migrate } from "./store/migrate.ts";
import { startDeliveryWorker } from "./workers/delivery-worker.ts";
import { runPeriodically } from "./workers/periodic.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  const db = await openDatabase(config.databaseUrl, { dataDir: config.dataDir });
  await migrate(db);
  await seedCreators(db);
  // Only the embedded database gets a demo brand: a shared PostgreSQL belongs to its operators.
  const demo = config.databaseUrl?.startsWith("postgres") ? null : await seedDemoBrand(db, new Date());

  const clock = () => new Date();
  const provider = simulatedAgentProvider({ joinAfterMs: config.simAgentJoinMs });
  // Listening comes first, so that with PORT=0 the discovery document and the served contract
  // name the port actually chosen.
  const server = createServer();
  server.listen(config.port);
  await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
  const port = (server.address() as AddressInfo).port;
  const base = config.publicBaseUrl.replace(`:${config.port}`, `:${port}`);
  server.on("request", createApp({ db, config: { ...config, publicBaseUrl: base }, clock, provider }));

  const ctx = { db, clock, provider, preparingTimeoutMs: config.preparingTimeoutMs, simAgentJoinMs: config.simAgentJoinMs };
  const sweeper = runPeriodically(() => sweepDueStreams(ctx), config.sweepIntervalMs, (error) => console.error("lifecycle sweep failed:", error));
  const transport = httpsTransport({ timeoutMs: config.webhookTimeoutMs, allowHosts: config.webhookAllowHosts });
  const deliveryCtx = { db, clock, transport, timeoutMs: config.webhookTimeoutMs, retryScheduleMs: config.webhookRetryScheduleMs };
  const deliveries = startDeliveryWorker(deliveryCtx, { intervalMs: config.sweepIntervalMs, onError: (error) => console.error("webhook delivery failed:", error) });

  console.log(`Live Stream Hosting API on ${db.engine === "pglite" ? "the embedded database" : "PostgreSQL"}`);
  console.log(`  API:  ${base}/api/v1`);
  console.log(`  Docs: ${base}/docs`);
  if (config.adminToken) console.log(`  Operator API: ${base}/admin/v1`);
  if (demo) {
    console.log(`\nCreated the demo brand "${demo.brand.name}" (${demo.brand.id}) with an all-scopes test key.`);
    console.log(`Shown once, copy it now:\n\n  ${demo.key}\n`);
    console.log(`Try: curl -H "Authorization: Bearer ${demo.key}" ${base}/api/v1/streams`);
  } else if (db.engine === "pglite") {
    // Keys are stored hashed, so the first start's key cannot be shown again: say how to get one.
    console.log("\nThe demo test key was shown on the first start only. For a new one, start with ADMIN_TOKEN set and use");
    console.log("`npm run admin -- keys create …` (docs/operators.md: Operator API and CLI), or remove the data directory to start afresh.");
  }

  const shutdown = async () => {
    await Promise.all([sweeper.stop(), deliveries.stop()]);
    await new Promise((resolve) => server.close(resolve));
    await db.close();
    process.exit(0);
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
  process.exit(1);
});
