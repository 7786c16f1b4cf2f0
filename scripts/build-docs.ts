/**
 * `npm run docs`: bundles the public contract (operator API removed by the `public` alias of
 * redocly.yaml) and renders it as one self-contained HTML page (Redoc inlined, nothing loaded from
 * a CDN). Fails when the output references a remote script, stylesheet or font, or when anything
 * internal is left in the public spec.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { DOCS_DIR, DOCS_HTML, DOCS_SPEC, ROOT } from "./docs-paths.ts";

const redocly = (...args: string[]) =>
  execFileSync(`${ROOT}node_modules/.bin/redocly`, args, { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });

mkdirSync(DOCS_DIR, { recursive: true });
redocly("bundle", "public", "-o", DOCS_SPEC);
redocly("build-docs", DOCS_SPEC, "--inlineBundle", "--title", "Live Stream Hosting API", "-o", DOCS_HTML);

// The renderer's footer shows a vendor logo fetched from a CDN at view time; the page must make no
// request off the server, so the logo URL is replaced by an empty image (the footer hides it).
const EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";
writeFileSync(DOCS_HTML, readFileSync(DOCS_HTML, "utf8").replace(/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg/g, EMPTY_IMAGE));

const problems: string[] = [];
const spec = readFileSync(DOCS_SPEC, "utf8");
for (const internal of ["x-internal", "/admin/v1", "adminToken", "\n  /brands", "\n  /keys", "\n  /webhook-deliveries"]) {
  if (spec.includes(internal)) problems.push(`the public spec still contains ${JSON.stringify(internal.trim())}`);
}
const html = readFileSync(DOCS_HTML, "utf8");
const remote = /<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*["']?(https?:)?\/\//gi;
for (const match of html.matchAll(remote)) problems.push(`the page loads a remote resource: ${match[0].slice(0, 120)}`);
if (/@import\s+url\(\s*["']?https?:|fonts\.googleapis\.com/.test(html)) problems.push("the page imports a remote stylesheet or font");
if (/cdn\.redoc\.ly|"disableTelemetry":false/.test(html)) problems.push("the page would contact the renderer's CDN or send usage data (redocly.yaml: telemetry: off)");

if (problems.length) {
  console.error(`docs build failed:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}
const kib = (path: string) => `${Math.round(statSync(path).size / 1024)} KiB`;
console.log(`docs: ${DOCS_HTML} (${kib(DOCS_HTML)}), ${DOCS_SPEC} (${kib(DOCS_SPEC)})`);
