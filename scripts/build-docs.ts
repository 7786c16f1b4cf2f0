/**
 * `npm run docs`: bundles the public contract (operator API removed by the `public` alias of
 * redocly.yaml) and renders it as one self-contained HTML page (Redoc inlined, nothing loaded from
 * a CDN), with CHANGELOG.md as the introduction's last section. Fails when the output references a
 * remote script, stylesheet or font, when anything internal is left in the public spec, or when the
 * changelog has no entry for the contract's version.
 *
 * Also derives the operator API's own document (build/contract/operator.yaml, not served): the
 * input of client generators for /admin/v1 (docs/generators.md).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadContract } from "../contract/contract.ts";
import { readContract, toYamlText } from "../contract/load.ts";
import { CONTRACT_DIR, DOCS_DIR, DOCS_HTML, DOCS_SPEC, OPERATOR_SPEC, ROOT } from "./docs-paths.ts";
import { rewriteServers } from "../server/http/served-docs.ts";
import { changelogForDocs } from "./changelog.ts";
import { addCodeSamples } from "./docs-samples.ts";
import { operatorContract } from "./operator-contract.ts";

const CHANGELOG = join(ROOT, "CHANGELOG.md");

const redocly = (...args: string[]) =>
  execFileSync(`${ROOT}node_modules/.bin/redocly`, args, { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });

mkdirSync(DOCS_DIR, { recursive: true });
redocly("bundle", "public", "-o", DOCS_SPEC);
// The published contract carries the docs page's code samples (docs/samples/, each run by the tests)
// and ends with CHANGELOG.md. A copy: what is read is frozen and shared, and both are added in place.
const published = structuredClone(await readContract(DOCS_SPEC));
const withSamples = addCodeSamples(published);
published.info.description = `${published.info.description.trimEnd()}\n\n${changelogForDocs(readFileSync(CHANGELOG, "utf8"))}`;
writeFileSync(DOCS_SPEC, toYamlText(published));
// The page names one server, the contract's first: a running server or mock puts its own in its
// place, in the embedded JSON and the pre-rendered markup alike (server/http/served-docs.ts), so
// that the page names the server it came from before any script has run.
const pageScratch = mkdtempSync(join(tmpdir(), "docs-page-"));
try {
  const pageSpec = join(pageScratch, "openapi.yaml");
  writeFileSync(pageSpec, toYamlText({ ...published, servers: published.servers.slice(0, 1) }));
  redocly("build-docs", pageSpec, "--inlineBundle", "--title", "Live Stream Hosting API", "-o", DOCS_HTML);
} finally {
  rmSync(pageScratch, { recursive: true, force: true });
}

mkdirSync(CONTRACT_DIR, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), "operator-contract-"));
try {
  const unbundled = join(scratch, "operator.yaml");
  writeFileSync(unbundled, toYamlText(operatorContract((await loadContract()).document)));
  redocly("bundle", unbundled, "--remove-unused-components", "-o", OPERATOR_SPEC);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

// The renderer's footer shows a vendor logo fetched from a CDN at view time; the page must make no
// request off the server, so the logo URL is replaced by an empty image (the footer hides it).
const EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";
// Code blocks (the samples, the payloads) wrap their long lines: unwrapped, they run off the
// panel's right edge, whose scroll bar the renderer hides. The renderer's own CSS variable
// (--code-wrap, `pre` by default) is set on them; npm run docs:check measures the result.
const WRAP_CODE =
  '<style>[data-component-name="CodeBlock/CodeBlock"]{--code-wrap:pre-wrap}[data-component-name="CodeBlock/CodeBlock"] pre{overflow-wrap:anywhere}</style>';
writeFileSync(
  DOCS_HTML,
  readFileSync(DOCS_HTML, "utf8")
    .replace(/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg/g, EMPTY_IMAGE)
    .replace("</head>", `${WRAP_CODE}</head>`),
);

const problems: string[] = [];
const spec = readFileSync(DOCS_SPEC, "utf8");
// `x-internal: false` stays: the servers declare their audience (OWASP API9).
for (const internal of [
  "x-internal: true",
  "/admin/v1",
  "adminToken",
  "\n  /brands",
  "\n  /keys",
  "\n  /webhook-deliveries",
]) {
  if (spec.includes(internal)) problems.push(`the public spec still contains ${JSON.stringify(internal.trim())}`);
}
if (!spec.includes(`### ${published.info.version} — `))
  problems.push(`the docs' changelog has no entry for ${published.info.version}`);
const operator = await readContract(OPERATOR_SPEC);
const operatorServers = (operator.servers ?? []).map((server: { url: string }) => server.url);
if (operatorServers.length !== 1 || !operatorServers[0].endsWith("/admin/v1"))
  problems.push(`the operator spec's servers are ${JSON.stringify(operatorServers)}, not one /admin/v1 URL`);
for (const [path, item] of Object.entries<Record<string, unknown>>(operator.paths)) {
  if (item.servers) problems.push(`the operator spec's path ${path} has its own servers`);
}
for (const name of ["StreamCreate", "apiKey"]) {
  if (JSON.stringify(operator.components).includes(`"${name}"`))
    problems.push(`the operator spec still contains the public ${name}`);
}
const html = readFileSync(DOCS_HTML, "utf8");
const remote = /<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*["']?(https?:)?\/\//gi;
for (const match of html.matchAll(remote)) problems.push(`the page loads a remote resource: ${match[0].slice(0, 120)}`);
if (/@import\s+url\(\s*["']?https?:|fonts\.googleapis\.com/.test(html))
  problems.push("the page imports a remote stylesheet or font");
if (!html.includes(WRAP_CODE))
  problems.push("the page has no style that wraps its code blocks (no </head> to put it before)");
if (/cdn\.redoc\.ly|"disableTelemetry":false/.test(html))
  problems.push("the page would contact the renderer's CDN or send usage data (redocly.yaml: telemetry: off)");
try {
  const served = rewriteServers(html, spec, { url: "https://served.example/api/v1", description: "This server" }).html;
  const markup = served.replace(/<script[\s\S]*?<\/script>/g, "");
  if (!markup.includes(">https://served.example/api/v1<"))
    problems.push("the page's markup does not show the server that serves it");
} catch (error) {
  problems.push(`a server cannot name itself on the page: ${(error as Error).message}`);
}

if (problems.length) {
  console.error(`docs build failed:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}
const kib = (path: string) => `${Math.round(statSync(path).size / 1024)} KiB`;
console.log(
  `docs: ${DOCS_HTML} (${kib(DOCS_HTML)}), ${DOCS_SPEC} (${kib(DOCS_SPEC)}) with curl and SDK samples for ${withSamples.operations} operations and a verify sample for ${withSamples.webhooks} webhooks; operator API: ${OPERATOR_SPEC} (${kib(OPERATOR_SPEC)})`,
);
