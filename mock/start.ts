/**
 * `npm run mock [-- --dynamic]`: serves openapi.yaml with Prism on MOCK_PORT (default 4010).
 * Static by default (answers the documented examples); `--dynamic`/`-d` generates bodies from the
 * schemas. Any other argument is handed to Prism unchanged (e.g. `--seed 42`, `--errors`).
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { DEFAULT_HOST, DEFAULT_SPEC, PRISM_BIN, prismArgs } from "./prism.ts";

function parsePort(value: string | undefined): number {
  if (value === undefined || value === "") return 4010;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    console.error(`MOCK_PORT must be a port number from 1 to 65535, got "${value}".`);
    process.exit(2);
  }
  return port;
}

const port = parsePort(process.env.MOCK_PORT);
const argv = process.argv.slice(2);
const dynamic = argv.some((arg) => arg === "--dynamic" || arg === "-d");
const passThrough = argv.filter((arg) => arg !== "--dynamic" && arg !== "-d");

const child = spawn(PRISM_BIN, [...prismArgs({ spec: DEFAULT_SPEC, host: DEFAULT_HOST, port, dynamic }), ...passThrough], {
  stdio: "inherit",
});
console.error(`Prism ${dynamic ? "dynamic" : "static"} mock of openapi.yaml on http://${DEFAULT_HOST}:${port} (pid ${child.pid})`);

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  console.error(`Could not start Prism (${PRISM_BIN}): ${error.message}. Run npm ci first.`);
  process.exit(1);
});
child.on("exit", (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
