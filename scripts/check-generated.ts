/**
 * `npm run generate:check`: fails when generated/api.ts, generated/limits.ts or
 * generated/query-defaults.ts is not what `npm run generate` would write from the current
 * openapi.yaml. Regenerates api.ts into a temporary file, exactly as the openapi-typescript CLI
 * does (same header, same Redocly config, enum values exported as arrays), and compares byte for
 * byte.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";
import { loadContract } from "../contract/contract.ts";
import { CONTRACT_FILE, loadRedoclyConfig } from "../contract/load.ts";
import { LIMITS_FILE, renderLimits } from "./generate-limits.ts";
import { QUERY_DEFAULTS_FILE, renderQueryDefaults } from "./generate-query-defaults.ts";

const root = new URL("../", import.meta.url);
const committedPath = fileURLToPath(new URL("generated/api.ts", root));

const redocly = await loadRedoclyConfig();
const fresh =
  COMMENT_HEADER +
  astToString(await openapiTS(pathToFileURL(CONTRACT_FILE), { redocly, silent: true, enumValues: true }));

const tempDir = mkdtempSync(join(tmpdir(), "check-generated-"));
const freshPath = join(tempDir, "api.ts");
writeFileSync(freshPath, fresh, "utf8");

let committed: Buffer | null = null;
try {
  committed = readFileSync(committedPath);
} catch {
  // missing: reported below as stale
}

if (committed !== null && committed.equals(readFileSync(freshPath))) {
  rmSync(tempDir, { recursive: true, force: true });
  console.log("generated/api.ts is up to date");
} else {
  const before = committed?.toString("utf8").split("\n") ?? [];
  const after = fresh.split("\n");
  const line = after.findIndex((text, index) => text !== before[index]);
  const where =
    committed === null ? "the file is missing" : `first difference at line ${(line === -1 ? after.length : line) + 1}`;
  console.error(`generated/api.ts is stale (${where}): run npm run generate`);
  console.error(`Fresh output kept for comparison: ${freshPath}`);
  process.exitCode = 1;
}

// The files written from the loaded contract, by scripts of our own.
const contract = await loadContract();
for (const [file, fresh] of [
  [LIMITS_FILE, renderLimits(contract.limits)],
  [QUERY_DEFAULTS_FILE, renderQueryDefaults(contract.operations)],
] as const) {
  const name = `generated/${basename(file)}`;
  if (existsSync(file) && readFileSync(file, "utf8") === fresh) {
    console.log(`${name} is up to date`);
  } else {
    console.error(`${name} is stale: run npm run generate`);
    process.exitCode = 1;
  }
}
