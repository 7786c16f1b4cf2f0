// The dashboard in headless Chromium (Debian's), on both database engines: the issue's "Must
// show" walked through the app as a member does, with axe-core on every page, no request to
// another host and no CSP violation. DASHBOARD_SCREENSHOTS=1 refreshes docs/dashboard/*.png.
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { generate } from "otplib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { httpsTransport } from "../../server/providers/webhook-transport.ts";
import { stockCreators } from "../../server/store/creators.ts";
import { seedStreams } from "../../testkit/seed-streams.ts";
import {
  ADMIN_TOKEN,
  availableEngines,
  CREATOR_ID,
  manualClock,
  postgresSkipReason,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";
import {
  chromiumSkipReason,
  DESKTOP,
  ensureBuilt,
  launchChromium,
  openProfile,
  PHONE,
  phoneWidthCheck,
  screenshot,
  seriousViolations,
  type Watch,
} from "./browser.ts";

// A page waits on the server and the browser: on a busy machine a second is not enough.
vi.setConfig({ expect: { poll: { timeout: 15_000, interval: 100 } } });

const noChromium = chromiumSkipReason();
if (noChromium) console.log(noChromium);
const noPostgres = postgresSkipReason();
if (noPostgres) console.log(noPostgres);

const PASSWORD = "a long and private passphrase";
/** Another device of the owner's: its sessions are named after its browser. */
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const API = "/dashboard/api/v1";
const SLOW = 120_000;

/** Every page of the app, each checked by axe once it shows real data. */
const PAGES = [
  "invitation",
  "overview",
  "sign-in",
  "keys",
  "webhooks",
  "delivery-log",
  "streams",
  "stream-detail",
  "stream-billed",
  "analytics",
  "logs",
  "log-request",
  "members",
  "audit-log",
  "audit-log-filtered",
  "security",
  "recovery-codes",
  "sign-in-code",
];

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local webhook receiver answering 200, and a page of another origin for the cross-origin try. */
async function startReceiver(): Promise<{ server: Server; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    if (request.method === "GET")
      return void response
        .writeHead(200, { "content-type": "text/html" })
        .end("<!doctype html><title>elsewhere</title>");
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      received.push({ headers: request.headers, body });
      response.writeHead(200, { "content-type": "application/json" }).end('{"received":"by the test receiver"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, received };
}

describe.skipIf(noChromium !== null).each(availableEngines())("dashboard in Chromium on %s", (engine) => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let browser: Browser;
  let brandId: string;
  let base: string;
  let owner: { context: BrowserContext; page: Page; watch: Watch };
  let apiKey: string;
  let streamId: string;
  const checked = new Set<string>();

  /**
   * The page as shown, at the desktop's width and then a phone's (390 px): axe-core finds no
   * serious or critical violation at either; on the phone nothing scrolls sideways and every
   * button is on screen once scrolled to. Its screenshots at both widths when asked.
   */
  async function checkPage(page: Page, name: string): Promise<void> {
    await page.waitForLoadState("networkidle");
    expect(
      await page
        .getByRole("status")
        .filter({ hasText: /^Loading/ })
        .count(),
      `${name} still loading`,
    ).toBe(0);
    expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
    if (engine === "pglite") await screenshot(page, name);
    await page.setViewportSize(PHONE);
    try {
      // The layout at the new width: wait for a frame drawn after the resize.
      await page.waitForFunction(
        (width) => (globalThis as unknown as { innerWidth: number }).innerWidth === width,
        PHONE.width,
      );
      const phone = await phoneWidthCheck(page);
      expect(phone.scrollWidth, `${name} at 390 px scrolls sideways`).toBeLessThanOrEqual(phone.innerWidth);
      expect(phone.offScreen, `${name} at 390 px: buttons off screen`).toEqual([]);
      expect(await seriousViolations(page), `axe on ${name} at 390 px`).toEqual([]);
      await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
      if (engine === "pglite") await screenshot(page, `${name}-phone`);
    } finally {
      await page.setViewportSize(DESKTOP);
    }
    checked.add(name);
  }

  async function invitationToken(email: string, role: string): Promise<string> {
    const answer = await server.call("POST", "/admin/v1/invitations", {
      key: ADMIN_TOKEN,
      body: { brand_id: brandId, email, role },
    });
    expect(answer.status).toBe(201);
    return answer.body.url.split("#")[1];
  }

  /** Follows an invitation link in `page` and sets the password: signed in on the overview. */
  async function acceptInvitation(page: Page, token: string, check = false): Promise<void> {
    const response = await page.goto(`${base}/dashboard/invitation#${token}`);
    expect(response?.headers()["content-security-policy"]).toMatch(
      /script-src 'self';.*style-src 'self';.*frame-ancestors 'none'/,
    );
    await expect.poll(() => page.getByText("Aurora Goods").count()).toBe(1);
    // The token leaves the address bar (and the history) once read.
    expect(page.url()).not.toContain(token);
    if (check) await checkPage(page, "invitation");
    await page.getByLabel("New password", { exact: true }).fill(PASSWORD);
    await page.getByLabel("Repeat the password").fill(PASSWORD);
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
  }

  async function signIn(page: Page, email: string): Promise<void> {
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  async function nav(page: Page, name: string, heading: string | RegExp): Promise<void> {
    await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name }).click();
    await page.getByRole("heading", { level: 1, name: heading }).waitFor();
  }

  /** A request from the page's own script, with its cookies and (unless told) its CSRF token. */
  function fromPage(
    page: Page,
    method: string,
    path: string,
    body?: unknown,
    csrf: "session" | "none" = "session",
  ): Promise<{ status: number; body: any }> {
    return page.evaluate(
      async ({ method, url, body, csrf }) => {
        const session = (await (await fetch("/dashboard/api/v1/session")).json()) as { csrf_token: string };
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (csrf === "session") headers["x-csrf-token"] = session.csrf_token;
        const response = await fetch(url, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: response.status, body: await response.json() };
      },
      { method, url: API + path, body, csrf },
    );
  }

  function sessionCookie(context: BrowserContext) {
    return context
      .cookies(`${base}/dashboard/`)
      .then((cookies) => cookies.find((cookie) => cookie.name === "lsh_session")?.value);
  }

  beforeAll(async () => {
    ensureBuilt();
    receiver = await startReceiver();
    // Time stands still unless a test moves it (a stream's minutes); it starts at the real now so
    // the browser's cookies and the server's expiry agree.
    server = await startTestServer({
      engine,
      clock: manualClock(new Date()),
      config: { webhookAllowHosts: ["127.0.0.1"] },
      delivery: { transport: httpsTransport({ timeoutMs: 5_000, allowHosts: ["127.0.0.1"] }) },
    });
    base = server.baseUrl;
    brandId = (await server.brand({ name: "Aurora Goods", plan: "growth" })).id;
    apiKey = (await server.key(brandId)).key;
    browser = await launchChromium();
    owner = await openProfile(browser, [base]);
  }, SLOW);

  // The steps build on each other: after a failure the rest would only wait out their timeouts.
  let failed: string | null = null;
  afterEach((context) => {
    if (context.task.result?.state === "fail") failed ??= context.task.name;
  });
  beforeEach((context) => {
    if (failed) context.skip(`skipped: the earlier step "${failed}" failed`);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    receiver?.server.close();
  });

  it(
    "invitation link → set password → signed in, on the overview",
    async () => {
      await acceptInvitation(owner.page, await invitationToken("owner@example.com", "owner"), true);
      await owner.page.getByText(brandId).waitFor();
      await checkPage(owner.page, "overview");
      // The test/live switch keeps the page and changes the mode's data.
      const toggle = owner.page.getByRole("switch", { name: "Test mode" });
      await toggle.click();
      await owner.page.waitForURL(/\/dashboard\/live\/overview$/);
      expect(await toggle.getAttribute("aria-checked")).toBe("false");
      expect(await owner.page.getByText("Test data:").count()).toBe(0);
      await toggle.click();
      await owner.page.waitForURL(/\/dashboard\/test\/overview$/);
      await owner.page.getByText("Test data:").waitFor();
    },
    SLOW,
  );

  it(
    "signs out and in again with a new session id; a planted cookie is not adopted",
    async () => {
      const { page, context } = owner;
      const before = await sessionCookie(context);
      await page.getByRole("button", { name: "Sign out", exact: true }).click();
      await page.getByRole("heading", { name: "Sign in to the dashboard" }).waitFor();
      await checkPage(page, "sign-in");
      const old = await server.call("GET", `${API}/session`, { headers: { cookie: `lsh_session=${before}` } });
      expect(old.body.signed_in).toBe(false);
      await context.addCookies([
        { name: "lsh_session", value: "planted-by-someone-else", domain: "127.0.0.1", path: "/dashboard" },
      ]);
      // The password field: what password managers need, and Show / Hide.
      const password = page.getByLabel("Password", { exact: true });
      expect(await password.getAttribute("autocomplete")).toBe("current-password");
      await password.fill("not yet");
      await page.getByRole("button", { name: "Show password" }).click();
      expect(await password.getAttribute("type")).toBe("text");
      await page.getByRole("button", { name: "Hide password" }).click();
      expect(await password.getAttribute("type")).toBe("password");
      await signIn(page, "owner@example.com");
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      const after = await sessionCookie(context);
      expect(after).toBeTruthy();
      expect([before, "planted-by-someone-else"]).not.toContain(after);
    },
    SLOW,
  );

  it(
    "a test key is shown once, works on /api/v1, and after revocation the next call is 401",
    async () => {
      const { page } = owner;
      await nav(page, "API keys", "API keys (test)");
      await page.getByLabel("Name").fill("ci key");
      await page.getByRole("button", { name: "Create key" }).click();
      const key = (await page.getByTestId("once-secret").textContent())!.trim();
      expect(key).toMatch(/^svc_test_/);
      await page.getByText("it is shown only this once").waitFor();
      await checkPage(page, "keys");
      const call = () =>
        fetch(`${base}/api/v1/streams`, { headers: { authorization: `Bearer ${key}` } }).then(
          (response) => response.status,
        );
      expect(await call()).toBe(200);
      await page.getByRole("button", { name: "I have copied it" }).click();
      // Focus moves to the list the key joined, not to <body>.
      await expect
        .poll(() =>
          page.evaluate(
            () =>
              (globalThis as unknown as { document: { activeElement: { textContent: string } | null } }).document
                .activeElement?.textContent,
          ),
        )
        .toBe("Keys");
      await page.reload();
      await page.getByRole("cell", { name: "ci key", exact: true }).waitFor();
      expect(await page.content()).not.toContain(key);
      // The row names the key by its mode and last four characters, matching the key shown once.
      const row = page.getByRole("row").filter({ hasText: "ci key" });
      expect(await row.locator("code").textContent()).toBe(`svc_test_…${key.slice(-4)}`);
      // A second active key of the same name is refused, naming the one that has it.
      await page.getByLabel("Name").fill("ci key");
      await page.getByRole("button", { name: "Create key" }).click();
      await page
        .getByRole("alert")
        .filter({ hasText: `A test key named "ci key" already exists (svc_test_…${key.slice(-4)})` })
        .waitFor();
      expect(await page.getByRole("row").filter({ hasText: "ci key" }).count()).toBe(1);
      await page.getByRole("button", { name: "Revoke ci key" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Revoke key" }).click();
      await page.getByRole("button", { name: "Revoke ci key" }).waitFor({ state: "detached" });
      await expect
        .poll(() =>
          page.evaluate(
            () =>
              (globalThis as unknown as { document: { activeElement: { textContent: string } | null } }).document
                .activeElement?.textContent,
          ),
        )
        .toBe("Keys");
      expect(await call()).toBe(401);
    },
    SLOW,
  );

  it(
    "a stream started in the dashboard has source dashboard; its webhook attempt is in the delivery log",
    async () => {
      const { page } = owner;
      // Registered through the API, the only way (spec §6): the page lists it, read-only.
      const hookUrl = `http://127.0.0.1:${receiver.port}/hooks`;
      const registered = await server.call("POST", "/api/v1/webhooks", {
        key: apiKey,
        body: { url: hookUrl, events: ["stream.started", "stream.ended"] },
      });
      expect(registered.status).toBe(201);
      await nav(page, "Webhooks", "Webhooks (test)");
      await page.getByRole("link", { name: "Delivery log" }).waitFor();
      await page.getByRole("link", { name: hookUrl }).waitFor();
      expect(await page.locator("main form, main input, main select, main textarea").count()).toBe(0);
      expect(await page.locator("main").getByRole("button").allTextContents()).toEqual([]);
      const howTo = page.getByRole("region", { name: "Registering and deleting" });
      expect(await howTo.textContent()).toMatch(/POST \/api\/v1\/webhooks.*DELETE \/api\/v1\/webhooks/s);
      expect(await howTo.locator("pre").allTextContents()).toEqual([
        expect.stringContaining(`curl -X POST ${base}/api/v1/webhooks`),
        expect.stringContaining("client.webhooks.create("),
      ]);
      await checkPage(page, "webhooks");

      // The creator picker: a clear error when GET /api/v1/creators fails, then the available
      // creators (name and id) once it answers.
      await page.route("**/api/v1/creators", (route) =>
        route.fulfill({
          status: 503,
          contentType: "application/json",
          body: JSON.stringify({ error: { code: "unavailable", message: "Try later." } }),
        }),
      );
      await nav(page, "Streams", "Streams (test)");
      await page.getByText("Start a stream").click();
      await page.getByRole("alert").filter({ hasText: "The creators could not be loaded: Try later." }).waitFor();
      const creator = page.getByLabel("Creator", { exact: true });
      expect(await creator.locator("option").allTextContents()).toEqual(["No creators: the list could not be loaded"]);
      await page.unroute("**/api/v1/creators");
      await page.getByRole("button", { name: "Load the creators again" }).click();
      const available = stockCreators()
        .filter((one) => one.status === "available")
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1))
        .map((one) => `${one.name} (${one.id})`);
      expect(available.length).toBeGreaterThan(0);
      await expect.poll(() => creator.locator("option").allTextContents()).toEqual(["Choose a creator", ...available]);
      // By keyboard: the name typed on the focused list picks the creator, Enter sends the form.
      const picked = stockCreators().find((one) => one.id === CREATOR_ID)!;
      await creator.focus();
      await page.keyboard.type(picked.name);
      expect(await creator.inputValue()).toBe(CREATOR_ID);
      await page.getByLabel("Product or game").fill("Aurora earbuds launch");
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { level: 1, name: "Aurora earbuds launch" }).waitFor();
      streamId = (await page.locator("dd code").first().textContent())!.trim();
      const listed = await server.call("GET", "/api/v1/streams", { key: apiKey });
      expect(listed.body.streams).toContainEqual(
        expect.objectContaining({ id: streamId, source: "dashboard", status: "live" }),
      );

      expect(await server.deliver()).toBeGreaterThan(0);
      const started = receiver.received.find((request) => request.body.includes(streamId));
      expect(started?.headers["x-service-signature"]).toMatch(/^t=\d+,v1=/);

      await nav(page, "Webhooks", "Webhooks (test)");
      await page.getByRole("link", { name: "Delivery log" }).click();
      await page.getByRole("heading", { name: "Delivery log" }).waitFor();
      const row = page.getByRole("row").filter({ hasText: "stream.started" });
      await expect.poll(() => row.textContent()).toMatch(/succeeded.*HTTP 200/);
      await row.getByRole("button", { name: "Attempts" }).click();
      await expect.poll(() => page.getByLabel("Payload").textContent()).toContain(streamId);
      await expect.poll(() => page.getByRole("cell", { name: /^t=\d+,v1=/ }).count()).toBe(1);
      // What the receiver answered, as text.
      await page.getByRole("cell", { name: '{"received":"by the test receiver"}' }).waitFor();
      await checkPage(page, "delivery-log");
      await page.getByLabel("Outcome").selectOption("failed");
      await page.getByText("No deliveries with outcome failed.").waitFor();
      await page.getByLabel("Outcome").selectOption("succeeded");
      await row.waitFor();
      // The log's total, as every paged list gives it.
      expect(await page.getByTestId("pager-range").textContent()).toBe("1–1 of 1 delivery");
    },
    SLOW,
  );

  it(
    "ends the stream; the analytics charts' totals equal GET /api/v1/analytics",
    async () => {
      const { page } = owner;
      // 7 min 1.5 s: 421 whole seconds, which the server rounds up to 8 minutes.
      server.clock.advance(7 * 60_000 + 1_500);
      await nav(page, "Streams", "Streams (test)");
      await page.getByRole("link", { name: "Aurora earbuds launch" }).click();
      await page.getByRole("button", { name: "End stream" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "End stream" }).click();
      await page.locator("dl .badge", { hasText: "ended" }).waitFor();
      await checkPage(page, "stream-detail");
      await nav(page, "Streams", "Streams (test)");
      await page.getByRole("cell", { name: "dashboard", exact: true }).first().waitFor();
      // Open, so axe checks the start form and its creator picker too.
      await page.getByText("Start a stream").click();
      await page.getByRole("option", { name: "Choose a creator" }).waitFor({ state: "attached" });
      await checkPage(page, "streams");

      await nav(page, "Analytics", "Analytics (test)");
      for (const period of ["7d", "24h", "30d"] as const) {
        await page.getByLabel("Period").selectOption(period);
        await page.waitForLoadState("networkidle");
        const expected = (await server.call("GET", `/api/v1/analytics?period=${period}`, { key: apiKey })).body;
        const shown = async (name: string) =>
          Number((await page.locator(`[data-total="${name}"]`).textContent())!.replaceAll(",", ""));
        await expect.poll(() => shown("streams")).toBe(expected.total_streams);
        expect([await shown("minutes"), await shown("viewers")]).toEqual([
          expected.total_minutes,
          expected.total_viewers,
        ]);
        expect(expected.total_minutes).toBe(8);
      }
      await page.getByLabel("Period").selectOption("7d");
      await expect.poll(() => page.locator("canvas").count()).toBeGreaterThanOrEqual(3);
      await checkPage(page, "analytics");
    },
    SLOW,
  );

  it(
    "the Logs page lists the API's requests, refusals included; a request shows its bodies, the secret redacted",
    async () => {
      const { page } = owner;
      const hook = await server.call("POST", "/api/v1/webhooks", {
        key: apiKey,
        body: { url: "https://hooks.example.com/logs", events: ["stream.ended"] },
      });
      expect(hook.status).toBe(201);
      const refused = await server.call("GET", "/api/v1/streams/7c9e6679-7425-40de-944b-e07fc1f90ae7", {
        key: apiKey,
      });
      expect(refused.status).toBe(404);
      await server.flushRequestLog();
      await nav(page, "Logs", "Logs (test)");
      const hookRow = page.getByRole("row").filter({ hasText: hook.headers.get("request-id")! });
      await expect.poll(() => hookRow.textContent()).toMatch(/201.*POST \/webhooks/);
      await checkPage(page, "logs");
      await page.getByLabel("Status").selectOption("4xx");
      await page
        .getByRole("row")
        .filter({ hasText: refused.headers.get("request-id")! })
        .waitFor();
      await expect
        .poll(() =>
          page
            .getByRole("row")
            .filter({ hasText: /\b201\b/ })
            .count(),
        )
        .toBe(0);
      expect(page.url()).toContain("status=4xx");
      await page.getByLabel("Status").selectOption("");
      await hookRow.getByRole("link", { name: hook.headers.get("request-id")! }).click();
      await page.getByRole("heading", { level: 1, name: /^Request/ }).waitFor();
      const response = page.getByRole("region", { name: "Response body" });
      await expect.poll(() => response.textContent()).toContain('"secret": "[redacted]"');
      expect(await page.content()).not.toContain(hook.body.secret);
      expect(await page.getByRole("region", { name: "Request body" }).textContent()).toContain(
        "hooks.example.com/logs",
      );
      await checkPage(page, "log-request");
      await page.getByRole("link", { name: "← Logs" }).click();
      await page.getByRole("heading", { level: 1, name: "Logs (test)" }).waitFor();
    },
    SLOW,
  );

  it(
    "a live stream's page tells its life: status changes, events and their deliveries, the hold and the charge",
    async () => {
      const { page } = owner;
      // A live webhook, registered through the API with a live key, receives the stream's events.
      const liveKey = (await server.key(brandId, { environment: "live" })).key;
      const registered = await server.call("POST", "/api/v1/webhooks", {
        key: liveKey,
        body: { url: `http://127.0.0.1:${receiver.port}/live-hooks`, events: ["stream.started", "stream.ended"] },
      });
      expect(registered.status).toBe(201);
      await page.getByRole("switch", { name: "Test mode" }).click();
      await page.waitForURL(/\/dashboard\/live\//);
      await nav(page, "Streams", "Streams (live)");
      await page.getByText("Start a stream").click();
      const creator = page.getByLabel("Creator");
      await expect.poll(() => creator.locator("option").count()).toBeGreaterThan(1);
      await creator.selectOption(CREATOR_ID);
      await page.getByLabel("Product or game").fill("Aurora live drop");
      expect(await page.getByLabel(/^Duration in minutes/).inputValue()).toBe("60");
      await page.getByRole("button", { name: "Start stream" }).click();
      await page.getByRole("heading", { level: 1, name: "Aurora live drop" }).waitFor();
      const timeline = page.getByRole("region", { name: "Timeline" });
      // Created in preparing, with the planned hour held at the Growth plan's 30 cents a minute.
      await timeline.getByText("Held $18.00 from the credits for the 60 planned minutes").waitFor();
      expect(await timeline.locator(".badge").first().textContent()).toBe("preparing");
      // The host joins after SIM_AGENT_JOIN_MS; 5 min 1 s later the stream is ended: 6 minutes billed.
      server.clock.advance(3_000);
      await page.getByRole("button", { name: "Refresh" }).click();
      await timeline.getByText("stream.started", { exact: true }).waitFor();
      expect(await server.deliver()).toBeGreaterThan(0);
      server.clock.advance(5 * 60_000 + 1_000);
      await page.getByRole("button", { name: "End stream" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "End stream" }).click();
      await timeline.getByText("Charged $1.80 for 6 billed minutes").waitFor();
      expect(await server.deliver()).toBeGreaterThan(0);
      await page.getByRole("button", { name: "Refresh" }).click();
      await expect
        .poll(() => timeline.locator(".deliveries li").allTextContents())
        .toEqual([
          expect.stringMatching(/^succeeded .*\/live-hooks · HTTP 200, 1 attempt/),
          expect.stringMatching(/^succeeded .*\/live-hooks · HTTP 200, 1 attempt/),
        ]);
      expect(await timeline.locator(":scope > ol > li").allTextContents()).toEqual([
        expect.stringMatching(/preparing Created, waiting for the host to join \(not billed\)$/),
        expect.stringMatching(/Held \$18\.00 from the credits for the 60 planned minutes$/),
        expect.stringMatching(/live Went live: billing starts$/),
        expect.stringMatching(/Event stream\.started evt_/),
        expect.stringMatching(/ended Ended: billing stops$/),
        expect.stringMatching(/Charged \$1\.80 for 6 billed minutes$/),
        expect.stringMatching(/Released the hold of \$18\.00$/),
        expect.stringMatching(/Event stream\.ended evt_/),
      ]);
      expect(await page.getByTestId("streamed").textContent()).toBe("5 min 1 s");
      expect(await page.getByTestId("charge").textContent()).toBe("$1.80");
      // The server's own account agrees: the charge left the balance and nothing stays held.
      const overview = await fromPage(page, "GET", "/modes/live/overview");
      expect([1_000_000 - overview.body.credits_cents, overview.body.credits_held_cents]).toEqual([180, 0]);
      await checkPage(page, "stream-billed");
      // A delivery opens in its webhook's delivery log.
      await timeline
        .getByRole("link", { name: /^Delivery log/ })
        .first()
        .click();
      await page.getByRole("heading", { name: /^Delivery [0-9a-f-]{36}$/ }).waitFor();
      await page.getByRole("switch", { name: "Test mode" }).click();
      await page.waitForURL(/\/dashboard\/test\/webhooks$/);
    },
    SLOW,
  );

  it(
    "the page of streams is in the address: Back from a stream returns to the same page",
    async () => {
      const { page } = owner;
      await seedStreams(server.db, { brandId, count: 45, now: server.clock(), creatorId: CREATOR_ID });
      await nav(page, "Streams", "Streams (test)");
      const pager = page.getByRole("navigation", { name: "Pages" });
      await pager.getByText(/^1–20 of 4\d streams$/).waitFor();
      const first = (await page.locator("main tbody a").first().textContent())!.trim();
      await pager.getByRole("button", { name: "Next" }).click();
      await page.waitForURL(/\/dashboard\/test\/streams\?offset=20$/);
      await pager.getByText(/^21–40 of 4\d streams$/).waitFor();
      // The rows of page 1 stay until page 2's arrive.
      await expect.poll(async () => (await page.locator("main tbody a").first().textContent())!.trim()).not.toBe(first);
      const second = page.locator("main tbody a").first();
      const name = (await second.textContent())!.trim();
      await second.click();
      await page.getByRole("heading", { level: 1, name }).waitFor();
      await page.goBack();
      await page.waitForURL(/\/dashboard\/test\/streams\?offset=20$/);
      await pager.getByText(/^21–40 of 4\d streams$/).waitFor();
      expect((await page.locator("main tbody a").first().textContent())!.trim()).toBe(name);
      // A filter starts again at its first page, also in the address.
      await page.getByLabel("Status").selectOption("ended");
      await page.waitForURL(/\/dashboard\/test\/streams\?status=ended$/);
    },
    SLOW,
  );

  it(
    "an owner invites a viewer, whose attempt to create a key the server refuses",
    async () => {
      const { page } = owner;
      await nav(page, "Members", "Members");
      await page.getByLabel("Email").fill("viewer@example.com");
      await page.getByLabel("Role", { exact: true }).selectOption("viewer");
      await page.getByRole("button", { name: "Create invitation link" }).click();
      const link = (await page.getByTestId("once-secret").textContent())!.trim();
      await checkPage(page, "members");
      await page.getByRole("button", { name: "I have copied it" }).click();

      const viewer = await openProfile(browser, [base]);
      try {
        await acceptInvitation(viewer.page, link.split("#")[1]!);
        await nav(viewer.page, "API keys", "API keys (test)");
        await viewer.page.getByText("Your role (viewer) can read this page but not change it.").waitFor();
        expect(await viewer.page.getByRole("button", { name: "Create key" }).count()).toBe(0);
        const refused = await fromPage(viewer.page, "POST", "/modes/test/keys", {
          name: "sneaky",
          scopes: ["streams:read"],
        });
        expect([refused.status, refused.body.error.code]).toEqual([403, "forbidden"]);
        expect(viewer.watch.problems).toEqual([]);
      } finally {
        await viewer.context.close();
      }
      const keys = await fromPage(page, "GET", "/modes/test/keys");
      expect(JSON.stringify(keys.body)).not.toContain("sneaky");
    },
    SLOW,
  );

  it(
    "an owner removes the viewer and invites the same email again; the removal stays in the audit log",
    async () => {
      const { page } = owner;
      // The page still shows the list from before the viewer joined.
      await page.reload();
      await page.getByRole("heading", { level: 1, name: "Members" }).waitFor();
      const ids = async () =>
        (await fromPage(page, "GET", "/members")).body.members
          .filter((one: { email: string }) => one.email === "viewer@example.com")
          .map((one: { member_id: string }) => one.member_id);
      const [removedId] = await ids();
      expect(removedId).toBeTruthy();
      await page.getByRole("button", { name: "Remove viewer@example.com" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Remove member" }).click();
      await page.getByRole("cell", { name: "viewer@example.com", exact: true }).waitFor({ state: "detached" });

      await page.getByLabel("Email").fill("viewer@example.com");
      await page.getByLabel("Role", { exact: true }).selectOption("developer");
      await page.getByRole("button", { name: "Create invitation link" }).click();
      const link = (await page.getByTestId("once-secret").textContent())!.trim();
      await page.getByRole("button", { name: "I have copied it" }).click();
      await page.getByRole("cell", { name: "viewer@example.com", exact: true }).waitFor();

      const back = await openProfile(browser, [base]);
      try {
        await acceptInvitation(back.page, link.split("#")[1]!);
        await back.page.getByText("viewer@example.com (developer)").waitFor();
        expect(back.watch.problems).toEqual([]);
      } finally {
        await back.context.close();
      }
      const [rejoinedId] = await ids();
      expect(rejoinedId).toBeTruthy();
      expect(rejoinedId).not.toBe(removedId);
      const log = (await fromPage(page, "GET", "/audit-log")).body.entries.map(
        (entry: { action: string; target_id: string }) => `${entry.action} ${entry.target_id}`,
      );
      expect(log).toEqual(expect.arrayContaining([`member.removed ${removedId}`, `member.joined ${rejoinedId}`]));
    },
    SLOW,
  );

  it(
    "a member of brand A gets 404 for brand B's stream and key",
    async () => {
      const other = await server.tenant({ name: "Brand B" });
      const { keyId } = await server.key(other.brandId);
      const stream = await server.call("POST", "/api/v1/streams", { key: other.key, body: streamBody() });
      expect(stream.status).toBe(201);
      const { page } = owner;
      expect((await fromPage(page, "GET", `/modes/test/streams/${stream.body.stream_id}`)).status).toBe(404);
      expect((await fromPage(page, "DELETE", `/modes/test/streams/${stream.body.stream_id}`)).status).toBe(404);
      expect((await fromPage(page, "DELETE", `/modes/test/keys/${keyId}`)).status).toBe(404);
      await page.goto(`${base}/dashboard/test/streams/${stream.body.stream_id}`);
      await page.getByRole("alert").waitFor();
      expect(
        (await server.call("GET", `/api/v1/streams/${stream.body.stream_id}`, { key: other.key })).body.status,
      ).toBe("live");
    },
    SLOW,
  );

  it(
    "refuses a change without the CSRF token, from another origin, and from another site's page",
    async () => {
      const { page, context } = owner;
      const count = async () => (await fromPage(page, "GET", "/modes/test/keys")).body.keys.length;
      const before = await count();
      const bare = await fromPage(
        page,
        "POST",
        "/modes/test/keys",
        { name: "no token", scopes: ["streams:read"] },
        "none",
      );
      expect([bare.status, bare.body.error.code]).toEqual([403, "csrf_failed"]);

      // The right cookie and token, but an Origin that is not the server's.
      const { csrf_token } = (await fromPage(page, "GET", "/session")).body;
      const cookie = (await context.cookies(`${base}/dashboard/`)).map((c) => `${c.name}=${c.value}`).join("; ");
      const foreign = await server.call("POST", `${API}/modes/test/keys`, {
        body: { name: "foreign", scopes: ["streams:read"] },
        headers: { cookie, "x-csrf-token": csrf_token, origin: "https://attacker.example" },
      });
      expect([foreign.status, foreign.body.error.code]).toEqual([403, "csrf_failed"]);

      // A page of another site in the same browser: its request is refused and changes nothing.
      const elsewhere = `http://localhost:${receiver.port}`;
      await context.route(`${elsewhere}/**`, (route) => route.continue());
      const attacker = await context.newPage();
      try {
        await attacker.goto(`${elsewhere}/attack`);
        await attacker.evaluate(async (url) => {
          const body = JSON.stringify({ name: "cross-site", scopes: ["streams:read"] });
          await fetch(url, {
            method: "POST",
            mode: "no-cors",
            credentials: "include",
            headers: { "content-type": "text/plain" },
            body,
          }).catch(() => undefined);
        }, `${base}${API}/modes/test/keys`);
      } finally {
        await attacker.close();
      }
      expect(await count()).toBe(before);
    },
    SLOW,
  );

  it(
    "lists the member's sessions, this one marked, and revokes the one on another device",
    async () => {
      const { page } = owner;
      const phone = await openProfile(browser, [base], { userAgent: IPHONE });
      try {
        await phone.page.goto(`${base}/dashboard/sign-in`);
        await signIn(phone.page, "owner@example.com");
        await phone.page.getByRole("heading", { name: "Overview" }).waitFor();
        await nav(page, "Security", "Security");
        const sessions = page.getByRole("region", { name: "Sessions" });
        const rows = sessions.locator("tbody tr");
        await expect.poll(() => rows.count()).toBe(2);
        const mine = rows.filter({ hasText: "This session" });
        expect(await mine.getByRole("cell").first().textContent()).toMatch(/^(Headless )?Chrome \d+ on Linux/);
        const theirs = rows.filter({ hasText: "Safari 17 on iPhone" });
        expect(await theirs.getByRole("cell", { name: "127.0.0.1" }).count()).toBe(1);
        expect(await sessions.getByTestId("sessions-total").textContent()).toBe("2 active sessions.");
        await checkPage(page, "security");
        await theirs.getByRole("button", { name: /^Revoke the session of Safari 17 on iPhone/ }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Revoke session" }).click();
        await expect.poll(() => rows.count()).toBe(1);
        await sessions.getByText("1 active session.").waitFor();
        // The phone's next request is refused: it is back at the sign-in page.
        await phone.page.reload();
        await phone.page.getByRole("heading", { name: "Sign in to the dashboard" }).waitFor();
        expect(phone.watch.problems).toEqual([]);
      } finally {
        await phone.context.close();
      }
    },
    SLOW,
  );

  it(
    "turns on two-factor, signs in with a recovery code, shows the audit log, signs out everywhere",
    async () => {
      const { page } = owner;
      await nav(page, "Security", "Security");
      // Setting up two-factor asks for the password: a session taken over cannot enrol its own app.
      await page.getByLabel("Password (to set up two-factor)", { exact: true }).fill(PASSWORD);
      await page.getByRole("button", { name: "Set up two-factor" }).click();
      const secret = (await page.getByTestId("totp-secret").textContent())!.trim();
      await page.getByRole("img", { name: "QR code of the two-factor secret" }).waitFor();
      const code = await generate({ secret, epoch: Math.floor(server.clock().getTime() / 1000) });
      await page.getByLabel("Code from the app").fill(code);
      await page.getByRole("button", { name: "Turn on two-factor" }).click();
      await page.getByTestId("recovery-codes").waitFor();
      const recovery = (await page.getByTestId("recovery-codes").locator("code").allTextContents()).map((text) =>
        text.trim(),
      );
      expect(recovery).toHaveLength(10);
      await checkPage(page, "recovery-codes");
      // Copied one a line, for a password manager; downloaded as a .txt made in the browser.
      await page.getByRole("button", { name: "Copy codes" }).click();
      await page.getByText("Copied the 10 codes to the clipboard.").waitFor();
      const clipboard = await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      );
      expect(clipboard).toBe(recovery.join("\n"));
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("button", { name: "Download .txt" }).click(),
      ]);
      expect(download.suggestedFilename()).toBe("live-stream-hosting-recovery-codes.txt");
      const file = readFileSync((await download.path())!, "utf8");
      expect(file).toContain("Account: owner@example.com (Aurora Goods)");
      expect(file.split("\n").filter((line) => recovery.includes(line))).toEqual(recovery);
      await page.getByText("Downloaded live-stream-hosting-recovery-codes.txt.").waitFor();
      await page.getByRole("button", { name: "I have saved them" }).click();

      await page.getByRole("button", { name: "Sign out", exact: true }).click();
      await signIn(page, "owner@example.com");
      await page.getByLabel("Authentication code").waitFor();
      await checkPage(page, "sign-in-code");
      await page.getByLabel("Authentication code").fill(recovery[0]!);
      await page.getByRole("button", { name: "Verify and sign in" }).click();
      // Back on the page the sign-out left.
      await page.getByRole("heading", { level: 1, name: "Security" }).waitFor();

      await nav(page, "Audit log", "Audit log");
      for (const action of [
        "key.created",
        "key.revoked",
        "stream.started",
        "stream.ended",
        "invitation.created",
        "member.removed",
        "member.totp_enabled",
      ]) {
        await page.locator("main td code").getByText(action, { exact: true }).first().waitFor();
      }
      // Each entry names what it was done to and the address of its request.
      const rowOf = (action: string) =>
        page
          .locator("main tbody tr")
          .filter({ has: page.locator("code").getByText(action, { exact: true }) })
          .first();
      expect(await rowOf("key.created").textContent()).toMatch(/owner@example\.com127\.0\.0\.1key\.createdtestci key/);
      expect(await rowOf("member.removed").textContent()).toMatch(
        /owner@example\.com127\.0\.0\.1member\.removedviewer@example\.com/,
      );
      expect(await rowOf("session.revoked").textContent()).toMatch(/127\.0\.0\.1session\.revokedSafari 17 on iPhone/);
      expect(await page.getByTestId("pager-range").textContent()).toMatch(/^1–\d+ of \d+ entries$/);
      await checkPage(page, "audit-log");
      // Filtered by action, then by member too, then by member alone: in the address, with the total.
      await page.getByLabel("Action").selectOption("key.created");
      await page.waitForURL(/\/dashboard\/audit-log\?action=key\.created$/);
      const rows = page.locator("main tbody tr");
      await expect.poll(() => rows.count()).toBe(1);
      expect(await rows.first().textContent()).toContain("ci key");
      expect(await page.getByTestId("pager-range").textContent()).toBe("1–1 of 1 entry");
      await page.getByLabel("Member").selectOption({ label: "viewer@example.com" });
      await page.waitForURL(/\?action=key\.created&member=[0-9a-f-]{36}$/);
      await page.getByText("No entries match the filters.").waitFor();
      await page.getByLabel("Action").selectOption("");
      await page.waitForURL(/\/dashboard\/audit-log\?member=[0-9a-f-]{36}$/);
      await page.locator("main td code").getByText("member.joined", { exact: true }).waitFor();
      expect(new Set((await rows.allTextContents()).map((row) => row.includes("viewer@example.com")))).toEqual(
        new Set([true]),
      );
      await checkPage(page, "audit-log-filtered");
      await page.reload();
      await page.locator("main td code").getByText("member.joined", { exact: true }).waitFor();
      expect(await page.getByLabel("Member").inputValue()).toMatch(/^[0-9a-f-]{36}$/);

      await nav(page, "Security", "Security");
      await page.getByRole("button", { name: "Sign out everywhere" }).click();
      await page.getByRole("heading", { name: "Sign in to the dashboard" }).waitFor();
    },
    SLOW,
  );

  it("checked every page, made no request to another host and broke no CSP rule", () => {
    expect([...checked].sort()).toEqual([...PAGES].sort());
    expect(owner.watch.problems).toEqual([]);
  });
});
