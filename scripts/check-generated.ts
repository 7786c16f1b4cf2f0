/**
 * `npm run generate:check`: fails when generated/api.ts or generated/limits.ts is not what
 * `npm run generate` would write from the current openapi.yaml. Regenerates into a temporary file, exactly as the
 * openapi-typescript CLI does (same header, same Redocly config, enum values exported as arrays),
 * and compares byte for byte.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";
import { loadContract } from "../contract/contract.ts";
import { CONTRACT_FILE, loadRedoclyConfig } from "../contract/load.ts";
import { LIMITS_FILE, renderLimits } from "./generate-limits.ts";

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

let committedLimits = "";
try {
  committedLimits = readFileSync(LIMITS_FILE, "utf8");
} catch {
  // missing: reported below as stale
}
if (committedLimits === renderLimits((await loadContract()).limits)) {
  console.log("generated/limits.ts is up to date");
} else {
  console.error("generated/limits.ts is stale: run npm run generate");
  process.exitCode = 1;
}
