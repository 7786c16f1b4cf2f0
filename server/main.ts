import type { AddressInfo } from "node:net";
import { loadContract } from "../contract/contract.ts";
import { createApp } from "./app.ts";
import { type Config, loadConfig, stackOnStartupFailure } from "./config.ts";
import { createHttpServer } from "./http/transport.ts";
import { backgroundFailure, createObservability, observeAttempts, observedSweep } from "./observability/observability.ts";
import { agentProviderFor } from "./providers/select.ts";
import { httpsTransport } from "./providers/webhook-transport.ts";
import { sweepStreamsAndRooms } from "./services/provider-rooms.ts";
import { seedDemoBrand } from "./services/operator.ts";
import { describeStartupError } from "./startup-errors.ts";
import { countBrands } from "./store/brands.ts";
import { seedCreators } from "./store/creators.ts";
import { openDatabase } from "./store/database.ts";
import { migrate } from "./store/migrate.ts";
import { startDeliveryWorker } from "./workers/delivery-worker.ts";
import { runPeriodically } from "./workers/periodic.ts";

/** Set once the configuration is read, so a start-up failure can name the setting at fault. */
let config: Config | undefined;

async function main(): Promise<void> {
  config = loadConfig();
  const contract = await loadContract();
  const observability = createObservability({ logLevel: config.logLevel, metrics: config.metricsToken !== undefined });
  const db = await openDatabase(config.databaseUrl, { dataDir: config.dataDir });
  await migrate(db);
  await seedCreators(db);
  // Only the embedded database gets a demo brand: a shared PostgreSQL belongs to its operators.
  const demo = config.databaseUrl?.startsWith("postgres") ? null : await seedDemoBrand(db, new Date());

  const clock = () => new Date();
  const provider = agentProviderFor(config, observability);
  // Listening comes first, so that with PORT=0 the discovery document and the served contract
  // name the port actually chosen.
  const http = createHttpServer({ requestTimeoutMs: config.httpRequestTimeoutMs, headersTimeoutMs: config.httpHeadersTimeoutMs, keepAliveTimeoutMs: config.httpKeepAliveTimeoutMs });
  const { server } = http;
  server.listen(config.port);
  await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
  const port = (server.address() as AddressInfo).port;
  const base = config.publicBaseUrl.replace(`:${config.port}`, `:${port}`);
  server.on("request", createApp({ db, contract, config: { ...config, publicBaseUrl: base }, clock, provider, observability }));

  const ctx = { db, clock, provider, preparingTimeoutMs: config.preparingTimeoutMs, simAgentJoinMs: config.simAgentJoinMs };
  const { workers } = observability;
  const sweep = observedSweep(observability, () => sweepStreamsAndRooms(ctx));
  const sweeper = workers.track("lifecycle_sweeper", runPeriodically(sweep, config.sweepIntervalMs, backgroundFailure(observability, "lifecycle sweep")));
  const transport = httpsTransport({ timeoutMs: config.webhookTimeoutMs, allowHosts: config.webhookAllowHosts });
  const deliveryCtx = { db, clock, transport, timeoutMs: config.webhookTimeoutMs, retryScheduleMs: config.webhookRetryScheduleMs, onAttempt: observeAttempts(observability) };
  const deliveries = workers.track("delivery_worker", startDeliveryWorker(deliveryCtx, { intervalMs: config.sweepIntervalMs, apiBusy: () => http.inFlight() > 0, onError: backgroundFailure(observability, "webhook delivery") }));

  const noBrands = !demo && db.engine === "postgres" && (await countBrands(db)) === 0;

  // Before the first line is printed: whoever waits for it may signal at once. npm forwards a
  // terminal's Ctrl-C to the process that already received it: a second signal must not cut the
  // shutdown short.
  let stopping = false;
  const { httpRequestTimeoutMs, databaseUrl, dataDir } = config;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping. Waiting for ${http.inFlight()} request(s) in flight, the lifecycle sweeper and the webhook delivery worker.`);
    await Promise.all([
      http.close(httpRequestTimeoutMs).then(({ answered, cut }) =>
        console.log(`  requests: ${answered} answered while stopping${cut ? `, ${cut} cut off after ${httpRequestTimeoutMs} ms` : ""}; port ${port} closed`),
      ),
      sweeper.stop().then(() => console.log("  lifecycle sweeper: stopped")),
      deliveries.stop().then(() => console.log("  webhook delivery worker: stopped, attempts in flight recorded")),
    ]);
    await db.close();
    console.log(`  database: closed${db.engine === "pglite" && databaseUrl !== "memory:" ? `, ${dataDir} unlocked` : ""}`);
    console.log("Stopped.");
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);

  console.log(`Live Stream Hosting API on ${db.engine === "pglite" ? "the embedded database" : "PostgreSQL"}`);
  console.log(`  API:  ${base}/api/v1`);
  console.log(`  Docs: ${base}/docs`);
  if (config.adminToken) console.log(`  Operator API: ${base}/admin/v1`);
  if (config.livekit) console.log(`  Agent provider: LiveKit (${config.livekit.url}, agent "${config.livekit.agentName}"); its webhooks go to ${base}/providers/livekit/webhook`);
  if (demo) {
    console.log(`\nCreated the demo brand "${demo.brand.name}" (${demo.brand.id}) with an all-scopes test key.`);
    console.log(`Shown once, copy it now:\n\n  ${demo.key}\n`);
    console.log(`Try: curl -H "Authorization: Bearer ${demo.key}" ${base}/api/v1/streams`);
  } else if (db.engine === "pglite") {
    // Keys are stored hashed, so the first start's key cannot be shown again: say how to get one.
    console.log("\nThe demo test key was shown on the first start only. For a new one, start with ADMIN_TOKEN set and use");
    console.log("`npm run admin -- keys create …` (docs/operators.md: Operator API and CLI), or remove the data directory to start afresh.");
  } else if (noBrands) {
    console.log("\nNo brands yet. With the server running with ADMIN_TOKEN set, create one and its first key:");
    console.log('  npm run admin -- brands create --name "Acme" --vertical live-commerce --plan growth');
    console.log("  npm run admin -- keys create --brand <brand_id> --name first --environment test --scopes streams:read,streams:write,analytics:read,webhooks:write");
    console.log("(docs/operators.md: Operator API and CLI)");
  }
}

main().catch((error) => {
  console.error(describeStartupError(error, config));
  // Only the line above is for the operator; the stack is for whoever debugs the server.
  if (stackOnStartupFailure(config?.logLevel)) console.error(error);
  process.exit(1);
});
