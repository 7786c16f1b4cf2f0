// The dashboard's cookies against a tossed one, and what its answers tell caches and frames: a
// stray `lsh_session` cookie on Path=/ (set by a sibling subdomain, or injected into a plain-http
// answer) never bounces a member to sign-in; every dashboard API answer is `no-store`; the docs
// page carries the dashboard's framing headers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browser, invite, member, PASSWORD, setCookieLine } from "../../testkit/dashboard-browser.ts";
import { availableEngines, startTestServer, type TestServer } from "../../testkit/harness.ts";

const TOSSED = "lsh_session=tossed-by-a-sibling-subdomain";

describe.each(availableEngines())("a tossed session cookie on %s", (engine) => {
  let server: TestServer;
  let brandId: string;
  beforeAll(async () => {
    // A proxy on this machine in front (TRUST_PROXY=loopback: the test's client), which says
    // whether the client came over https.
    server = await startTestServer({ engine, config: { trustProxy: ["loopback"] } });
    brandId = (await server.brand()).id;
  });
  afterAll(() => server.close());

  it("over https: the session is a __Host- cookie, and a stray lsh_session before or after it changes nothing", async () => {
    const https = { "x-forwarded-proto": "https" };
    const owner = browser(server, { origin: `https://${new URL(server.baseUrl).host}`, headers: https });
    await owner.send("GET", "/session");
    const token = await invite(server, brandId, "tossed-https@example.com");
    const accepted = await owner.send("POST", "/invitations/accept", { token, password: PASSWORD });
    expect(accepted.status).toBe(201);
    const line = setCookieLine(accepted, "__Host-lsh_session");
    expect(line).toMatch(/; Path=\/; /);
    expect(line).toMatch(/; Secure/);
    expect(line).not.toMatch(/Domain=/i);
    const real = `__Host-lsh_session=${owner.session()}`;

    for (const cookie of [`${TOSSED}; ${real}`, `${real}; ${TOSSED}`]) {
      const answer = await server.call("GET", "/dashboard/api/v1/session", { headers: { ...https, cookie } });
      expect([answer.status, answer.body.signed_in], cookie).toEqual([200, true]);
      expect(answer.body.member.email).toBe("tossed-https@example.com");
      const overview = await server.call("GET", "/dashboard/api/v1/modes/test/overview", {
        headers: { ...https, cookie },
      });
      expect(overview.status, cookie).toBe(200);
    }
    // The plain name is not read over https at all: alone, it signs nobody in.
    const plainName = await server.call("GET", "/dashboard/api/v1/session", {
      headers: { ...https, cookie: `lsh_session=${owner.session()}` },
    });
    expect(plainName.body.signed_in).toBe(false);
  });

  it("over plain http: the first of two lsh_session cookies is read, as a browser sends the real Path=/dashboard one first", async () => {
    const owner = await member(server, brandId, "tossed-http@example.com");
    const real = `lsh_session=${owner.session()}`;
    // A browser sends the cookie of the longer path first: the real one (Path=/dashboard), then
    // the tossed one (Path=/).
    const answer = await server.call("GET", "/dashboard/api/v1/modes/test/overview", {
      headers: { cookie: `${real}; ${TOSSED}` },
    });
    expect(answer.status).toBe(200);
    const session = await server.call("GET", "/dashboard/api/v1/session", {
      headers: { cookie: `${real}; ${TOSSED}` },
    });
    expect(session.body.signed_in).toBe(true);
  });
});

describe.each(availableEngines())("dashboard answers and caches on %s", (engine) => {
  let server: TestServer;
  let brandId: string;
  beforeAll(async () => {
    server = await startTestServer({ engine });
    brandId = (await server.brand()).id;
  });
  afterAll(() => server.close());

  it("marks every dashboard API answer Cache-Control: no-store, refusals and 404s included", async () => {
    const owner = await member(server, brandId, "no-store@example.com");
    const answers = {
      session: await owner.send("GET", "/session"),
      keys: await owner.send("GET", "/modes/test/keys"),
      created: await owner.send("POST", "/modes/test/keys", { name: "cached?", scopes: ["streams:read"] }),
      refused: await owner.send(
        "POST",
        "/modes/test/keys",
        { name: "x", scopes: ["streams:read"] },
        { origin: "https://evil.example" },
      ),
      signedOut: await server.call("GET", "/dashboard/api/v1/modes/test/keys"),
      unknown: await server.call("GET", "/dashboard/api/v1/nowhere"),
    };
    expect(Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, answer.status]))).toEqual({
      session: 200,
      keys: 200,
      created: 201,
      refused: 403,
      signedOut: 401,
      unknown: 404,
    });
    expect(answers.session.body.csrf_token).toEqual(expect.any(String));
    for (const [name, answer] of Object.entries(answers))
      expect(answer.headers.get("cache-control"), name).toBe("no-store");
  });

  it("serves /docs with the dashboard's framing headers and a CSP that allows only the page's own scripts", async () => {
    const dashboard = await server.call("GET", "/dashboard/keys");
    const docs = await server.call("GET", "/docs");
    expect(docs.status).toBe(200);
    for (const header of ["x-frame-options", "x-content-type-options", "referrer-policy"])
      expect(docs.headers.get(header), header).toBe(dashboard.headers.get(header));
    expect(docs.headers.get("x-frame-options")).toBe("DENY");
    const directives = (answer: typeof docs) =>
      new Map(
        (answer.headers.get("content-security-policy") ?? "").split("; ").map((directive) => {
          const [name, ...values] = directive.split(" ");
          return [name!, values.join(" ")];
        }),
      );
    const docsPolicy = directives(docs);
    const dashboardPolicy = directives(dashboard);
    for (const name of ["default-src", "connect-src", "object-src", "base-uri", "form-action", "frame-ancestors"])
      expect(docsPolicy.get(name), name).toBe(dashboardPolicy.get(name));
    expect(docsPolicy.get("frame-ancestors")).toBe("'none'");
    // Scripts: the server's own and the page's inline ones by their hash; never 'unsafe-inline'.
    expect(docsPolicy.get("script-src")).toMatch(/^'self'( 'sha256-[A-Za-z0-9+/=]+')+$/);
  });
});
