import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

/** Debian's Chromium, as scripts/check-docs.ts launches it. */
export const CHROMIUM = "/usr/bin/chromium";

export function chromiumSkipReason(): string | null {
  return existsSync(CHROMIUM)
    ? null
    : `Dashboard browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium).`;
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILT = fileURLToPath(new URL("../../build/dashboard/index.html", import.meta.url));
/** Set DASHBOARD_SCREENSHOTS=1 to refresh the PNGs of docs/dashboard/ (docs/dashboard.md shows them). */
export const SCREENSHOT_DIR = process.env.DASHBOARD_SCREENSHOTS
  ? fileURLToPath(new URL("../../docs/dashboard/", import.meta.url))
  : null;

/** npm test builds first; a lone run of this file builds the app if it was never built. */
export function ensureBuilt(): void {
  if (!existsSync(BUILT)) execFileSync("npm", ["run", "dashboard:build"], { cwd: ROOT, stdio: "inherit" });
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // Even a request that escaped the route filter resolves nowhere.
      "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
    ],
  });
}

/** What a page did that the dashboard must never do: reach another host, break the CSP, throw. */
export interface Watch {
  problems: string[];
}

/**
 * A browser profile (its own cookies) that may talk only to `origins`; every other request is
 * recorded and refused, as are CSP violations and script errors. `userAgent` stands for another
 * browser (the server names a session's device after it).
 */
export async function openProfile(
  browser: Browser,
  origins: string[],
  { userAgent }: { userAgent?: string } = {},
): Promise<{ context: BrowserContext; page: Page; watch: Watch }> {
  const context = await browser.newContext({
    viewport: DESKTOP,
    permissions: ["clipboard-read", "clipboard-write"],
    acceptDownloads: true,
    ...(userAgent ? { userAgent } : {}),
  });
  const watch: Watch = { problems: [] };
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (origins.some((origin) => url.startsWith(`${origin}/`)) || url.startsWith("data:")) return route.continue();
    watch.problems.push(`request to another host: ${url}`);
    return route.abort("blockedbyclient");
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on("pageerror", (error) => watch.problems.push(`script error: ${error.message}`));
  page.on("console", (message) => {
    if (/Content.Security.Policy/i.test(message.text())) watch.problems.push(`CSP: ${message.text()}`);
  });
  return { context, page, watch };
}

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeResult {
  violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }>;
}

export interface AxeFinding {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. The script is evaluated
 * through the DevTools protocol, which the page's CSP does not govern; the app itself runs under it.
 */
export async function seriousViolations(page: Page): Promise<AxeFinding[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    // In the page: its globals, which Node's types do not describe.
    const page = globalThis as unknown as {
      document: unknown;
      axe: { run(context: unknown, options: object): Promise<AxeResult> };
    };
    const result = await page.axe.run(page.document, { resultTypes: ["violations"] });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => String(node.target)),
    }));
  });
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}

/** Saves docs/dashboard/<name>.png (a phone's: <name>-phone.png) when screenshots are asked for. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOT_DIR) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOT_DIR}${name}.png`, fullPage: true });
}

/** The desktop viewport every profile opens with, and the phone width each page is checked at too. */
export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

export interface PhoneFinding {
  /** `document.scrollingElement.scrollWidth` and `innerWidth`: the page scrolls sideways when the first is larger. */
  scrollWidth: number;
  innerWidth: number;
  /** Buttons and links of the page's content that stay (partly) off-screen after scrolling to them. */
  offScreen: string[];
}

/**
 * The page as it is now, at the phone's width: how wide it scrolls, and every button and
 * row action of `main` scrolled into view and checked to lie within the screen's width.
 */
export async function phoneWidthCheck(page: Page): Promise<PhoneFinding> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => {
    const view = globalThis as unknown as {
      document: { scrollingElement: { scrollWidth: number } };
      innerWidth: number;
    };
    return { scrollWidth: view.document.scrollingElement.scrollWidth, innerWidth: view.innerWidth };
  });
  const offScreen: string[] = [];
  const controls = page.locator("main button:visible, main .row-actions a:visible");
  for (let index = 0; index < (await controls.count()); index++) {
    const control = controls.nth(index);
    await control.scrollIntoViewIfNeeded();
    const box = await control.boundingBox();
    const viewport = page.viewportSize()!;
    const inView =
      box !== null &&
      box.x >= 0 &&
      box.x + box.width <= viewport.width + 0.5 &&
      box.y >= 0 &&
      box.y + box.height <= viewport.height + 0.5;
    if (!inView) offScreen.push(`${(await control.textContent())?.trim()} at ${JSON.stringify(box)}`);
  }
  return { scrollWidth, innerWidth, offScreen };
}
