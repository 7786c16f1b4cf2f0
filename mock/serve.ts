/**
 * `npm run mock [-- --dynamic]`: the mock on MOCK_PORT (default 4010), under /api/v1 like the
 * server. Static by default (answers the documented examples); `--dynamic`/`-d` generates bodies
 * from the schemas. Any other argument is handed to Prism unchanged (e.g. `--seed 42`).
 */
import { integerSetting } from "../server/config.ts";
import { DEFAULT_HOST, type RunningMock, startMock } from "./prism.ts";

function mockPort(): number {
  try {
    return integerSetting(process.env, "MOCK_PORT", 4010, { min: 1, max: 65_535 });
  } catch (error) {
    console.error(`${(error as Error).message}.`);
    process.exit(2);
  }
}

const port = mockPort();
const argv = process.argv.slice(2);
const dynamic = argv.some((arg) => arg === "--dynamic" || arg === "-d");
const prismArgs = argv.filter((arg) => arg !== "--dynamic" && arg !== "-d");

// Handlers come before Prism starts: a signal's default action would kill this process and leave
// Prism running. npm forwards a terminal's Ctrl-C to the process that already received it: the
// repeat is ignored.
let mock: RunningMock | undefined;
let stopRequested: NodeJS.Signals | undefined;
const shutdown = (signal: NodeJS.Signals) => {
  if (stopRequested) return;
  stopRequested = signal;
  if (mock) stopMock(mock, signal);
};
const stopMock = (running: RunningMock, signal: NodeJS.Signals) => {
  console.log(`\n${signal}: stopping the mock and Prism (pid ${running.process.pid}).`);
  void running.stop().then(() => {
    console.log("Stopped.");
    process.exit(0);
  });
};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, shutdown);

try {
  mock = await startMock({ port, host: DEFAULT_HOST, dynamic, prismArgs });
  if (stopRequested) stopMock(mock, stopRequested);
  else {
    console.log(`Mock of the Live Stream Hosting API (${dynamic ? "dynamic: generated data" : "static: the documented examples"})`);
    console.log(`  API:  ${mock.apiBase}`);
    console.log(`  Docs: ${mock.url}/docs`);
    console.log("  Any well-formed key works: svc_test_ (or svc_live_) and 32 letters or digits, e.g.");
    console.log(`  curl -H "Authorization: Bearer svc_test_${"0".repeat(32)}" ${mock.apiBase}/streams`);
  }
} catch (error) {
  console.error(`Could not start the mock: ${(error as Error).message}`);
  process.exit(1);
}
