// The dashboard API's request limit, on both engines: per signed-in session (another member's
// session and the brand's API keys keep their own budgets), per client address without a
// session, the 429 envelope and RateLimit-* headers; on PostgreSQL, one session's count shared by
// two app instances, as by two processes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../store/database.ts";
import { browser, member } from "../../testkit/dashboard-browser.ts";
import {
  availableEngines,
  type CallResult,
  freshDatabase,
  manualClock,
  postgresSkipReason,
  startTestServer,
  type TestServer,
} from "../../testkit/harness.ts";

const skipped = postgresSkipReason();

/** Lowered from 300 and 100, so that a test reaches them in a few requests. */
const LIMITS = { perSession: 5, perAddress: 4 };

function rateLimitOf(response: CallResult) {
  return {
    limit: response.headers.get("ratelimit-limit"),
    remaining: response.headers.get("ratelimit-remaining"),
    reset: response.headers.get("ratelimit-reset"),
  };
}

describe.each(availableEngines())("dashboard request limit on %s", (engine) => {
  let server: TestServer;
  let brandId: string;
  beforeAll(async () => {
    server = await startTestServer({ engine, config: { dashboardRateLimit: LIMITS } });
    brandId = (await server.brand({ plan: "starter" })).id;
  });
  afterAll(() => server.close());

  it("refuses a session's requests past its limit with 429 rate_limited; others of the brand are still served", async () => {
    // Each acceptance sends two requests without a session (counted per address) in this minute.
    server.clock.set(new Date("2026-11-20T12:00:05.000Z"));
    const script = await member(server, brandId, "script@example.com");
    const colleague = await member(server, brandId, "colleague@example.com", "viewer");
    const { key } = await server.key(brandId);

    server.clock.set(new Date("2026-11-20T12:01:20.000Z"));
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push(await script.send("GET", "/modes/test/overview"));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(answers.map((answer) => rateLimitOf(answer).remaining)).toEqual(["4", "3", "2", "1", "0", "0", "0"]);
    const refused = answers[5]!;
    expect(refused.body).toEqual({
      error: {
        code: "rate_limited",
        message: "Too many requests in this session: at most 5 a minute. Try again in 40 s.",
      },
    });
    expect(rateLimitOf(refused)).toEqual({ limit: "5", remaining: "0", reset: "40" });
    expect(refused.headers.get("retry-after")).toBeNull();
    expect(refused.headers.get("request-id")).toMatch(/^req_/);
    // A changing request is refused too, before its CSRF check and its body.
    const create = await script.send("POST", "/modes/test/keys", { name: "more", scopes: ["streams:read"] });
    expect([create.status, create.body.error.code]).toEqual([429, "rate_limited"]);

    // Another member of the same brand has a window of their own…
    const other = await colleague.send("GET", "/modes/test/overview");
    expect(other.status).toBe(200);
    expect(rateLimitOf(other)).toEqual({ limit: "5", remaining: "4", reset: "40" });
    // …and so do the brand's API keys, whose limit is the brand's (100 a minute).
    const api = await server.call("GET", "/api/v1/streams", { key });
    expect(api.status).toBe(200);
    expect(rateLimitOf(api)).toEqual({ limit: "100", remaining: "99", reset: "40" });

    // The next minute, the session is served again.
    server.clock.set(new Date("2026-11-20T12:02:00.000Z"));
    const later = await script.send("GET", "/modes/test/overview");
    expect(later.status).toBe(200);
    expect(rateLimitOf(later)).toEqual({ limit: "5", remaining: "4", reset: "60" });
  });

  it("limits requests without a session per client address, sign-in page and invitations alike", async () => {
    server.clock.set(new Date("2026-11-20T12:10:00.000Z"));
    const signedIn = await member(server, brandId, "address@example.com");
    server.clock.set(new Date("2026-11-20T12:11:30.000Z"));
    const visitor = browser(server);
    const first = await visitor.send("GET", "/session");
    expect(first.status).toBe(200);
    expect(rateLimitOf(first)).toEqual({ limit: "4", remaining: "3", reset: "30" });
    // A request that needs a session is counted too (and answered 401 while under the limit).
    expect((await visitor.send("GET", "/members")).status).toBe(401);
    expect((await visitor.send("POST", "/invitations/inspect", { token: "x".repeat(43) })).status).toBe(404);
    // A bogus session cookie is no session: counted by address.
    const bogus = await visitor.send("GET", "/session", undefined, { cookie: "lsh_session=not-a-session" });
    expect(bogus.status).toBe(200);
    expect(rateLimitOf(bogus).remaining).toBe("0");

    const signIn = await visitor.send("POST", "/session", { email: "address@example.com", password: "whatever it is" });
    expect(signIn.status).toBe(429);
    expect(signIn.body).toEqual({
      error: {
        code: "rate_limited",
        message: "Too many requests from your address without a session: at most 4 a minute. Try again in 30 s.",
      },
    });
    expect(rateLimitOf(signIn)).toEqual({ limit: "4", remaining: "0", reset: "30" });
    // The sign-in was refused before the password was checked: it is no failed attempt.
    expect(await server.db.query("SELECT 1 FROM sign_in_throttle")).toEqual([]);
    // Without TRUST_PROXY, X-Forwarded-For does not make a new address.
    const forwarded = await visitor.send("GET", "/session", undefined, { "x-forwarded-for": "203.0.113.9" });
    expect(forwarded.status).toBe(429);
    expect((await visitor.send("GET", "/members")).status).toBe(429);

    // A signed-in member at the same address is counted by session, and served.
    const served = await signedIn.send("GET", "/session");
    expect([served.status, served.body.signed_in]).toEqual([200, true]);
    expect(rateLimitOf(served)).toEqual({ limit: "5", remaining: "4", reset: "30" });

    server.clock.set(new Date("2026-11-20T12:12:00.000Z"));
    expect((await visitor.send("GET", "/session")).status).toBe(200);
  });
});

describe.each(availableEngines())("dashboard address limit behind a proxy on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ engine, config: { dashboardRateLimit: LIMITS, trustProxy: ["loopback"] } });
  });
  afterAll(() => server.close());

  it("with TRUST_PROXY, counts each address the proxy names apart", async () => {
    const from = (address: string) => browser(server, { headers: { "x-forwarded-for": `10.0.0.1, ${address}` } });
    const one = from("198.51.100.1");
    for (let i = 0; i < LIMITS.perAddress; i++) expect((await one.send("GET", "/session")).status).toBe(200);
    expect((await one.send("GET", "/session")).status).toBe(429);
    const another = await from("198.51.100.2").send("GET", "/session");
    expect(another.status).toBe(200);
    expect(rateLimitOf(another).remaining).toBe("3");
  });
});

describe.skipIf(skipped !== null)("dashboard session limit across app instances sharing PostgreSQL", () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it("counts one session's requests to either instance in one window", async () => {
    // A second server on its own pool against the same database, as a second process would be.
    const fresh = await freshDatabase("postgres");
    closers.push(() => fresh.drop());
    const secondDb = await openDatabase(fresh.url);
    closers.push(() => secondDb.close());
    const clock = manualClock(new Date("2026-11-20T12:00:10.000Z"));
    const config = { dashboardRateLimit: LIMITS };
    const servers = [
      await startTestServer({ database: fresh.db, clock, config }),
      await startTestServer({ database: secondDb, clock, config }),
    ];
    closers.push(() => Promise.all(servers.map((server) => server.close())));
    const brandId = (await servers[0]!.brand()).id;
    const first = await member(servers[0]!, brandId, "shared@example.com");
    const second = browser(servers[1]!);
    second.cookies.set("lsh_session", first.session()!);

    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await (i % 2 ? second : first).send("GET", "/members")).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
