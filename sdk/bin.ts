#!/usr/bin/env node
// The package's `live-stream-hosting` command; the logic is in cli.ts.
import { main } from "./cli.ts";

// Ctrl-C ends `listen` cleanly (a second one at once); any other command stops at once.
const stop = new AbortController();
process.once("SIGINT", () => {
  if (process.argv[2] !== "listen") process.exit(130);
  stop.abort();
  process.once("SIGINT", () => process.exit(130));
});

process.exitCode = await main(process.argv.slice(2), {
  env: process.env,
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  signal: stop.signal,
});
