/**
 * `npm run lint:contract` (part of `npm test`): Spectral with the OWASP API Security ruleset
 * (.spectral.yaml) on the contract in its three forms, failing on any error:
 * - openapi.yaml, operator API included;
 * - the published contract, as `npm run docs` bundles it (the `public` API of redocly.yaml:
 *   `remove-x-internal`), written to build/lint/openapi.public.yaml;
 * - that contract as a running server serves it at /docs/openapi.yaml, naming the deployment
 *   as its one server (server/http/served-docs.ts), written to build/lint/openapi.served.yaml.
 * Warnings are printed with their count; docs/conformance.md lists the waivers and warnings.
 * First, the rules Spectral cannot state, as the server reads them (contract/operations.ts): every
 * dashboard operation that takes the session names its least role (`x-required-role`), and every
 * changing one the CSRF token.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CONTRACT_FILE, readContract } from "../contract/load.ts";
import { indexOperations } from "../contract/operations.ts";
import { servedContract, THIS_SERVER } from "../server/http/served-docs.ts";
import { ROOT } from "./docs-paths.ts";

const LINT_DIR = join(ROOT, "build/lint");
const PUBLISHED = join(LINT_DIR, "openapi.public.yaml");
const SERVED = join(LINT_DIR, "openapi.served.yaml");
const bin = (name: string) => join(ROOT, "node_modules/.bin", name);

try {
  indexOperations(await readContract(CONTRACT_FILE, "dereferenced"));
  console.log("operations: every dashboard operation states its session, CSRF and least role");
} catch (error) {
  console.error(`openapi.yaml: ${(error as Error).message}`);
  console.error("lint:contract failed: the contract must state every operation's access rules.");
  process.exit(1);
}

mkdirSync(LINT_DIR, { recursive: true });
execFileSync(bin("redocly"), ["bundle", "public", "-o", PUBLISHED], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
writeFileSync(
  SERVED,
  servedContract(readFileSync(PUBLISHED, "utf8"), { url: "https://api.example.com/api/v1", description: THIS_SERVER }),
);

interface Finding {
  code: string;
  severity: number;
  path: string[];
  message: string;
  source: string;
}

let failed = false;
for (const file of ["openapi.yaml", PUBLISHED, SERVED]) {
  const run = spawnSync(bin("spectral"), ["lint", file, "--format", "json", "--quiet", "--fail-severity", "error"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  let findings: Finding[];
  try {
    findings = JSON.parse(run.stdout) as Finding[];
  } catch {
    console.error(`spectral could not lint ${file}:\n${run.stdout}${run.stderr}`);
    process.exit(2);
  }
  const errors = findings.filter((finding) => finding.severity === 0);
  const warnings = findings.filter((finding) => finding.severity === 1);
  const name = file.startsWith(ROOT) ? file.slice(ROOT.length) : file;
  for (const finding of errors)
    console.error(`${name}#/${finding.path.join("/")}  error  ${finding.code}  ${finding.message}`);
  const counts = new Map<string, number>();
  for (const finding of warnings) counts.set(finding.code, (counts.get(finding.code) ?? 0) + 1);
  const byRule = [...counts].map(([code, count]) => `${code} ${count}`);
  console.log(
    `spectral ${name}: ${errors.length} errors, ${warnings.length} warnings${byRule.length ? ` (${byRule.join(", ")})` : ""}`,
  );
  if (errors.length > 0 || run.status !== 0) failed = true;
}
if (failed) {
  console.error(
    "lint:contract failed: fix the contract, or waive a rule in .spectral.yaml with the spec rule or decision that requires it (docs/conformance.md).",
  );
  process.exit(1);
}
