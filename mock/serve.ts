/**
 * `npm run mock [-- --dynamic] [--vertical V]`: the mock on MOCK_PORT (default 4010), under
 * /api/v1 like the server; the only port it opens. Static by default (answers the documented
 * examples); `--dynamic`/`-d` is the server on an in-memory database, state per key
 * (docs/mock.md); `--vertical` is the vertical of the brand it plays. `--seed`, which fixed the
 * generated data of the dynamic mock before it kept state, is still accepted and changes nothing.
 */
import { parseArgs } from "node:util";
import { integerSetting } from "../server/config.ts";
import { verticalValues } from "../generated/api.ts";
import type { Vertical } from "../server/domain/types.ts";
import { DEFAULT_MOCK_VERTICAL } from "./app.ts";
import { SEED_NOTE } from "./dynamic.ts";
import { DEFAULT_MOCK_KEYS } from "./keys.ts";
import { DEFAULT_HOST, type RunningMock, startMock } from "./prism.ts";

const USAGE = `Usage: npm run mock [-- [--dynamic] [--vertical igaming|live-commerce]]
  --dynamic, -d  the server's test and live modes on data of its own, kept per key until the mock
                 stops, instead of the documented examples (docs/mock.md)
  --vertical V   the vertical of the brand the mock plays (default ${DEFAULT_MOCK_VERTICAL}, the demo brand's):
                 POST /streams answers 403 vertical_mismatch as such a brand's server does
  --seed S       accepted for scripts written for the generated data of earlier versions; changes nothing
  MOCK_PORT      the port to listen on (default 4010)`;

function mockArgs(): { dynamic: boolean; seed: string | undefined; vertical: Vertical } {
  try {
    const { values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        dynamic: { type: "boolean", short: "d", default: false },
        seed: { type: "string" },
        vertical: { type: "string", default: DEFAULT_MOCK_VERTICAL },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    const vertical = verticalValues.find((value) => value === values.vertical);
    if (!vertical) throw new Error(`--vertical must be ${verticalValues.join(" or ")}, got "${values.vertical}"`);
    return { dynamic: values.dynamic, seed: values.seed, vertical };
  } catch (error) {
    console.error(`${(error as Error).message}.\n${USAGE}`);
    process.exit(2);
  }
}

function mockPort(): number {
  try {
    return integerSetting(process.env, "MOCK_PORT", 4010, { min: 1, max: 65_535 });
  } catch (error) {
    console.error(`${(error as Error).message}.`);
    process.exit(2);
  }
}

const { dynamic, seed, vertical } = mockArgs();
const port = mockPort();

// Handlers come before the start: a signal then stops the mock once it has started. npm forwards
// a terminal's Ctrl-C to the process that already received it: the repeat is ignored.
let mock: RunningMock | undefined;
let stopRequested: NodeJS.Signals | undefined;
const shutdown = (signal: NodeJS.Signals) => {
  if (stopRequested) return;
  stopRequested = signal;
  if (mock) stopMock(mock, signal);
};
const stopMock = (running: RunningMock, signal: NodeJS.Signals) => {
  console.log(`\n${signal}: stopping the mock.`);
  void running.stop().then(() => {
    console.log("Stopped.");
    process.exit(0);
  });
};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, shutdown);

if (seed !== undefined) console.error(SEED_NOTE);

try {
  mock = await startMock({ port, host: DEFAULT_HOST, dynamic, vertical });
  if (stopRequested) stopMock(mock, stopRequested);
  else {
    console.log(
      `Mock of the Live Stream Hosting API (${dynamic ? "dynamic: the server on data of its own, kept per key until it stops" : "static: the documented examples"}; a ${vertical} brand)`,
    );
    console.log(`  API:  ${mock.apiBase}`);
    console.log(`  Docs: ${mock.url}/docs`);
    console.log("  Any well-formed key works: svc_test_ (or svc_live_) and 32 letters or digits, e.g.");
    console.log(`  curl -H "Authorization: Bearer svc_test_${"0".repeat(32)}" ${mock.apiBase}/streams`);
    if (dynamic)
      console.log(
        `  Each key is a brand of its own, kept until the mock stops (the ${DEFAULT_MOCK_KEYS} used last); test keys play test mode, live keys live mode on simulated hosts.`,
      );
  }
} catch (error) {
  console.error(`Could not start the mock: ${(error as Error).message}`);
  process.exit(1);
}
