/** The server process main.ts starts: configuration, runtime, the lines an operator reads, signals. */
import { type Config, loadConfig, stackOnStartupFailure } from "./config.ts";
import { createRuntime, type StopEvent } from "./runtime.ts";
import { seedDemoBrand } from "./services/operator.ts";
import { describeStartupError } from "./startup-errors.ts";
import { countBrands } from "./store/brands.ts";
import { flushLogs } from "./observability/logger.ts";

/** Set once the configuration is read, so a start-up failure can name the setting at fault. */
let config: Config | undefined;

async function main(): Promise<void> {
  config = loadConfig();
  const runtime = await createRuntime(config);
  const { db } = runtime;
  // Only the embedded database gets a demo brand: a shared PostgreSQL belongs to its operators.
  const demo = config.databaseUrl?.startsWith("postgres") ? null : await seedDemoBrand(db, runtime.clock());
  const { port, publicBaseUrl: base } = await runtime.start();
  const noBrands = !demo && db.engine === "postgres" && (await countBrands(db)) === 0;

  // Before the first line is printed: whoever waits for it may signal at once. npm forwards a
  // terminal's Ctrl-C to the process that already received it: a second signal must not cut the
  // shutdown short.
  let stopping = false;
  const { httpRequestTimeoutMs, databaseUrl, dataDir } = config;
  const stopped = (event: StopEvent) => {
    switch (event.part) {
      case "requests":
        return console.log(
          `  requests: ${event.answered} answered while stopping${event.cut ? `, ${event.cut} cut off after ${httpRequestTimeoutMs} ms` : ""}; port ${port} closed`,
        );
      case "lifecycle sweeper":
        return console.log("  lifecycle sweeper: stopped");
      case "delivery worker":
        return console.log("  webhook delivery worker: stopped, attempts in flight recorded");
      case "database":
        return console.log(
          `  database: closed${db.engine === "pglite" && databaseUrl !== "memory:" ? `, ${dataDir} unlocked` : ""}`,
        );
    }
  };
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(
      `\n${signal}: stopping. Waiting for ${runtime.inFlight()} request(s) in flight, the lifecycle sweeper and the webhook delivery worker.`,
    );
    await runtime.stop(stopped);
    // The request log is written in batches: its last lines go out before the final one.
    await flushLogs(runtime.observability.logger);
    console.log("Stopped.");
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);

  console.log(`Live Stream Hosting API on ${db.engine === "pglite" ? "the embedded database" : "PostgreSQL"}`);
  console.log(`  API:  ${base}/api/v1`);
  console.log(`  Docs: ${base}/docs`);
  if (config.adminToken) console.log(`  Operator API: ${base}/admin/v1`);
  if (!config.totpEncryption.current)
    console.log("  Two-factor secrets are stored unencrypted: set TOTP_ENCRYPTION_KEY (docs/operators.md).");
  if (config.livekit)
    console.log(
      `  Agent provider: LiveKit (${config.livekit.url}, agent "${config.livekit.agentName}"); its webhooks go to ${base}/providers/livekit/webhook`,
    );
  if (demo) {
    console.log(`\nCreated the demo brand "${demo.brand.name}" (${demo.brand.id}) with an all-scopes test key.`);
    console.log(`Shown once, copy it now:\n\n  ${demo.key}\n`);
    console.log(`Try: curl -H "Authorization: Bearer ${demo.key}" ${base}/api/v1/streams`);
  } else if (db.engine === "pglite") {
    // Keys are stored hashed, so the first start's key cannot be shown again: say how to get one.
    console.log(
      "\nThe demo test key was shown on the first start only. For a new one, start with ADMIN_TOKEN set and use",
    );
    console.log(
      `\`ADMIN_URL=${base}/admin/v1 npm run admin -- keys create …\` (docs/operators.md: Operator API and CLI), or remove the data directory to start afresh.`,
    );
  } else if (noBrands) {
    // The CLI needs the server's ADMIN_TOKEN and where it listens (it assumes port 8080 otherwise).
    console.log(
      "\nNo brands yet. With the server running with ADMIN_TOKEN set, create one and its first key, in a shell with the same ADMIN_TOKEN exported:",
    );
    console.log(`  export ADMIN_URL=${base}/admin/v1`);
    console.log('  npm run admin -- brands create --name "Acme" --vertical live-commerce --plan growth');
    console.log(
      "  npm run admin -- keys create --brand <brand_id> --name first --environment test --scopes streams:read,streams:write,analytics:read,webhooks:write,logs:read",
    );
    console.log("(docs/operators.md: Operator API and CLI)");
  }
}

main().catch((error) => {
  console.error(describeStartupError(error, config));
  // Only the line above is for the operator; the stack is for whoever debugs the server.
  if (stackOnStartupFailure(config?.logLevel)) console.error(error);
  process.exit(1);
});
