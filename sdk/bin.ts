#!/usr/bin/env node
// The package's `live-stream-hosting` command; the logic is in cli.ts.
import { main } from "./cli.ts";

process.exitCode = await main(process.argv.slice(2), {
  env: process.env,
  out: (line) => console.log(line),
  err: (line) => console.error(line),
});
