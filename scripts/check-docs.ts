/**
 * `npm run docs:check`: opens the built docs page in headless Chromium (Debian's package) with the
 * network blocked, served as a server serves it (naming itself: server/http/served-docs.ts).
 * Checks that the page names that server with JavaScript off, walks the sidebar tag by tag, opens
 * every public operation and checks that it is rendered with its samples shown whole (no code
 * block wider than its panel), checks that no operator operation is and that the changelog shows
 * the contract's version, and saves build/docs/screenshot.png.
 *
 * Any request the page makes to a host other than the local file server fails the check: the page
 * must be self-contained.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Locator, type Page } from "playwright-core";
import { loadContract } from "../contract/contract.ts";
import { readContract } from "../contract/load.ts";
import { indexOperations, type OperationIndex } from "../contract/operations.ts";
import { docsCsp } from "../server/http/page-security.ts";
import { rewriteServers, THIS_SERVER } from "../server/http/served-docs.ts";
import { DOCS_DIR, DOCS_HTML, DOCS_SPEC, ROOT } from "./docs-paths.ts";

const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOT = join(DOCS_DIR, "screenshot.png");

interface Operation {
  id: string;
  summary: string;
  tag: string;
}

function operationsOf(operations: OperationIndex): Operation[] {
  return operations.all.map((operation) => ({
    id: operation.operationId,
    summary: operation.summary,
    tag: operation.tags[0] ?? "",
  }));
}

if (!existsSync(CHROMIUM)) {
  console.error("docs:check needs Chromium from Debian's packages: apt-get install -y chromium");
  process.exit(1);
}
if (!existsSync(DOCS_HTML)) execFileSync(process.execPath, ["scripts/build-docs.ts"], { cwd: ROOT, stdio: "inherit" });

/**
 * An operation's code samples (docs/samples/, run by docs/samples.test.ts) sit behind a language
 * menu: curl shows first; choosing "TypeScript (SDK)" shows the SDK sample.
 */
async function showsBothSamples(page: Page, section: Locator, cutOff: string[]): Promise<boolean> {
  try {
    const menu = section.getByText("curl", { exact: true }).first();
    if (!(await section.getByText("$LIVE_STREAM_HOSTING_BASE_URL").first().isVisible())) return false;
    cutOff.push(...(await cutOffCode(section)));
    await menu.click({ timeout: 5_000 });
    await page.getByText("TypeScript (SDK)", { exact: true }).last().click({ timeout: 5_000 });
    const shown = await section.getByText('"@live-stream-hosting/sdk"').first().isVisible();
    cutOff.push(...(await cutOffCode(section)));
    await section.getByText("TypeScript (SDK)", { exact: true }).first().click({ timeout: 5_000 });
    await page.getByText("curl", { exact: true }).last().click({ timeout: 5_000 });
    return shown;
  } catch {
    return false;
  }
}
/** The first line of each visible code block in `section` whose text is wider than the block. */
function cutOffCode(section: Locator): Promise<string[]> {
  return section
    .locator("pre")
    .evaluateAll((blocks) =>
      blocks
        .filter((block) => block.getClientRects().length > 0 && block.scrollWidth > block.clientWidth + 1)
        .map((block) => (block.textContent ?? "").split("\n")[0]!.slice(0, 60)),
    );
}

const published = operationsOf(indexOperations(await readContract(DOCS_SPEC, "dereferenced")));
const publishedIds = new Set(published.map((operation) => operation.id));
const internal = operationsOf((await loadContract()).operations).filter((operation) => !publishedIds.has(operation.id));

// The page is served the way the API server serves it: at /docs, with the spec beside it, both
// naming this server, the page under its Content-Security-Policy (a refused script or style is a
// failure below).
const server = createServer((request, response) => {
  const served = rewriteServers(readFileSync(DOCS_HTML, "utf8"), readFileSync(DOCS_SPEC, "utf8"), {
    url: `${origin}/api/v1`,
    description: THIS_SERVER,
  });
  const files: Record<string, [string, string]> = {
    "/docs": [served.html, "text/html; charset=utf-8"],
    "/docs/openapi.yaml": [served.yaml, "application/yaml"],
  };
  const file = files[request.url ?? ""];
  if (!file) return void response.writeHead(404).end();
  response.writeHead(200, { "content-type": file[1], "content-security-policy": docsCsp(served.html) }).end(file[0]);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const BUILT_SERVERS = /localhost:8080\/api\/v1|127\.0\.0\.1:4010/;

const BROWSER_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // Belt and braces: even a request that escaped the route filters below resolves nowhere.
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
];
const profile = mkdtempSync(join(tmpdir(), "docs-check-"));
const failures: string[] = [];
const blocked: string[] = [];
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  viewport: { width: 1400, height: 1000 },
  args: BROWSER_ARGS,
});
try {
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith("blob:") || url.startsWith("data:")) return route.continue();
    blocked.push(url);
    return route.abort("blockedbyclient");
  });
  // Without any script run: the page names the server it came from, and no other.
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: BROWSER_ARGS });
  try {
    const plain = await (await browser.newContext({ javaScriptEnabled: false })).newPage();
    await plain.route("**/*", (route) =>
      route.request().url().startsWith(origin) ? route.continue() : route.abort("blockedbyclient"),
    );
    await plain.goto(`${origin}/docs`, { waitUntil: "load" });
    const text = await plain.locator("body").innerText();
    const namesItself = text.includes(`${origin}/api/v1`) && !BUILT_SERVERS.test(text);
    if (!namesItself) failures.push(`without JavaScript the page does not name its server ${origin}/api/v1 alone`);
    console.log(`${namesItself ? "ok     " : "MISSING"} Without JavaScript: names ${origin}/api/v1`);
  } finally {
    await browser.close();
  }

  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/.test(message.text()))
      pageErrors.push(message.text().slice(0, 200));
  });
  await page.goto(`${origin}/docs`, { waitUntil: "load" });
  await page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: 30_000 });

  const sidebar = page.locator('[data-component-name="Menu/Menu"]').first();
  for (const tag of [...new Set(published.map((operation) => operation.tag))]) {
    // The last match: an introduction section can share the tag's name (e.g. "Webhooks").
    const opened = await sidebar
      .getByText(tag, { exact: true })
      .last()
      .click({ timeout: 10_000 })
      .then(
        () => true,
        () => false,
      );
    if (!opened) failures.push(`tag ${tag} is not in the sidebar`);
    for (const operation of published.filter((candidate) => candidate.tag === tag)) {
      // Operations render with the id "<tag>/<operationid>" once opened from the sidebar.
      await sidebar
        .getByText(operation.summary, { exact: true })
        .first()
        .click({ timeout: 10_000 })
        .catch(() => undefined);
      const section = page
        .locator(`[id="${tag.toLowerCase().replaceAll(" ", "-")}/${operation.id.toLowerCase()}"]`)
        .first();
      const shown = await section
        .waitFor({ state: "visible", timeout: 10_000 })
        .then(() => section.getByText(operation.summary, { exact: true }).first().isVisible())
        .catch(() => false);
      if (!shown) failures.push(`public operation ${operation.id} ("${operation.summary}") is not rendered`);
      const cutOff: string[] = [];
      const samples = shown && (await showsBothSamples(page, section, cutOff));
      if (!samples) failures.push(`public operation ${operation.id} does not show its curl and SDK samples`);
      for (const line of cutOff)
        failures.push(`public operation ${operation.id}: a code block is cut off on the right (${line}…)`);
      const whole = samples && cutOff.length === 0;
      console.log(
        `${shown && whole ? "ok     " : "MISSING"} ${tag} / ${operation.id}: ${operation.summary}${whole ? " (curl and SDK samples, whole)" : ""}`,
      );
    }
  }

  // The changelog (CHANGELOG.md, added by npm run docs) is the introduction's last section.
  const version = (await readContract(DOCS_SPEC)).info.version as string;
  await sidebar
    .getByText("Changelog", { exact: true })
    .first()
    .click({ timeout: 10_000 })
    .catch(() => undefined);
  const entry = page
    .getByRole("heading", { name: new RegExp(`${version.replaceAll(".", "\\.")} — \\d{4}-\\d{2}-\\d{2}`) })
    .first();
  const changelog = await entry.waitFor({ state: "visible", timeout: 10_000 }).then(
    () => true,
    () => false,
  );
  if (!changelog) failures.push(`the changelog's entry for ${version} is not rendered`);
  console.log(`${changelog ? "ok     " : "MISSING"} Changelog: ${version}`);

  await page.goto(`${origin}/docs#/streams`, { waitUntil: "load" });
  await sidebar
    .getByText(published.find((operation) => operation.id === "createStream")?.summary ?? "", { exact: true })
    .first()
    .click({ timeout: 10_000 })
    .catch(() => undefined);
  await page.waitForTimeout(500);
  await page.screenshot({ path: SCREENSHOT });

  const html = await page.content();
  // A summary tells an operator operation only when no published one has the same (the dashboard's
  // "List webhooks" is also the API's); the operation's anchor always does.
  const publishedSummaries = new Set(published.map((operation) => operation.summary));
  for (const operation of internal) {
    const summaryShown = !publishedSummaries.has(operation.summary) && html.includes(operation.summary);
    if (html.toLowerCase().includes(`/${operation.id.toLowerCase()}"`) || summaryShown) {
      failures.push(`operator operation ${operation.id} appears on the public page`);
    }
  }
  if (html.includes("/admin/v1")) failures.push("the public page mentions /admin/v1");
  for (const url of blocked) failures.push(`the page tried to load ${url} (blocked)`);
  for (const message of pageErrors) failures.push(`script error on the page: ${message}`);
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}

console.log(
  `${published.length} public operations checked, ${internal.length} operator operations absent; screenshot: ${SCREENSHOT}`,
);
if (failures.length) {
  console.error(`docs:check failed:\n- ${failures.join("\n- ")}`);
  process.exit(1);
}
