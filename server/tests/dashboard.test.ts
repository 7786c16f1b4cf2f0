// The dashboard's API over HTTP, on both engines: invitations, sign-in, sessions, CSRF, roles,
// brand scoping, cookie-vs-key separation, the sign-in limit and session expiry.
import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, availableEngines, postgresSkipReason, startTestServer, streamBody, type TestServer } from "../testing/harness.ts";

const skipped = postgresSkipReason();
if (skipped) console.log(skipped);

const PASSWORD = "a long and private passphrase";
const API = "/dashboard/api/v1";

/** A browser of one member: its cookies, CSRF token and Origin, as the app sends them. */
function browser(server: TestServer, { origin = server.baseUrl } = {}) {
  const cookies = new Map<string, string>();
  let csrf = "";
  const send = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
    const headers: Record<string, string> = { origin, "x-csrf-token": csrf, cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; "), ...extra };
    const response = await server.call(method, API + path, { body, headers });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      const [name, value] = [pair!.slice(0, at), pair!.slice(at + 1)];
      if (value === "") cookies.delete(name);
      else cookies.set(name, value);
    }
    if (typeof response.body?.csrf_token === "string") csrf = response.body.csrf_token;
    return response;
  };
  return { send, cookies, setCsrf: (token: string) => (csrf = token), session: () => cookies.get("lsh_session") };
}

async function invite(server: TestServer, brandId: string, email: string, role = "owner"): Promise<string> {
  const response = await server.call("POST", "/admin/v1/invitations", { key: ADMIN_TOKEN, body: { brand_id: brandId, email, role } });
  expect(response.status).toBe(201);
  return response.body.url.split("#")[1];
}

/** A member who accepted an invitation: signed in in their own browser. */
async function member(server: TestServer, brandId: string, email: string, role = "owner") {
  const token = await invite(server, brandId, email, role);
  const member = browser(server);
  await member.send("GET", "/session");
  const accepted = await member.send("POST", "/invitations/accept", { token, password: PASSWORD });
  expect(accepted.status).toBe(201);
  return member;
}

describe.each(availableEngines())("dashboard API on %s", (engine) => {
  let server: TestServer;
  let brandId: string;
  beforeAll(async () => {
    // Every webhook attempt is answered 500: the delivery log shows the failure and its retry.
    const transport = { send: async () => ({ ok: false as const, status: 500, error: "HTTP 500" }) };
    server = await startTestServer({ engine, config: { webhookAllowHosts: ["127.0.0.1"] }, delivery: { transport } });
    brandId = (await server.brand({ plan: "starter" })).id;
  });
  afterAll(() => server.close());

  it("invitation link → password → signed in; the link works once and is stored hashed", async () => {
    const token = await invite(server, brandId, "Owner@Example.com");
    const stored = await server.db.query<{ token_hash: string }>("SELECT token_hash FROM invitations WHERE email = 'owner@example.com'");
    expect(JSON.stringify(stored)).not.toContain(token);
    const owner = browser(server);
    expect((await owner.send("GET", "/session")).body).toMatchObject({ signed_in: false, member: null });
    expect((await owner.send("POST", "/invitations/inspect", { token })).body).toMatchObject({ email: "owner@example.com", role: "owner" });
    const weak = await owner.send("POST", "/invitations/accept", { token, password: "password1234" });
    expect([weak.status, weak.body.error.code]).toEqual([400, "weak_password"]);
    const accepted = await owner.send("POST", "/invitations/accept", { token, password: PASSWORD });
    expect(accepted.status).toBe(201);
    expect(accepted.body).toMatchObject({ signed_in: true, member: { email: "owner@example.com", role: "owner" }, brand: { brand_id: brandId } });
    const cookie = accepted.headers.getSetCookie().find((line) => line.startsWith("lsh_session="))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/dashboard/);
    expect(cookie).not.toMatch(/Secure/);
    expect((await owner.send("GET", "/session")).body.signed_in).toBe(true);
    const again = await browser(server).send("POST", "/invitations/inspect", { token }, {});
    expect(again.status).toBe(403);
    const reuse = browser(server);
    await reuse.send("GET", "/session");
    expect((await reuse.send("POST", "/invitations/accept", { token, password: PASSWORD })).status).toBe(404);
    const hash = await server.db.query<{ password_hash: string }>("SELECT password_hash FROM members WHERE email = 'owner@example.com'");
    expect(hash[0]!.password_hash).toMatch(/^\$argon2id\$/);
  });

  it("a key made in the dashboard is shown once, works on /api/v1, and is 401 after revocation", async () => {
    const owner = await member(server, brandId, "keys@example.com");
    const created = await owner.send("POST", "/modes/test/keys", { name: "ci", scopes: ["streams:read", "streams:write"] });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^svc_test_/);
    expect((await server.call("GET", "/api/v1/streams", { key: created.body.key })).status).toBe(200);
    const listed = await owner.send("GET", "/modes/test/keys");
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    expect(listed.body.keys).toContainEqual(expect.objectContaining({ key_id: created.body.key_id, name: "ci", revoked_at: null }));
    expect((await owner.send("DELETE", `/modes/test/keys/${created.body.key_id}`)).status).toBe(200);
    expect((await server.call("GET", "/api/v1/streams", { key: created.body.key })).status).toBe(401);
    // Live keys need Growth: this brand is on Starter.
    const live = await owner.send("POST", "/modes/live/keys", { name: "live", scopes: ["streams:read"] });
    expect([live.status, live.body.error.code]).toEqual([402, "plan_required"]);
  });

  it("a session cookie never works on /api/v1, an API key never on the dashboard API", async () => {
    const owner = await member(server, brandId, "separate@example.com");
    const cookie = `lsh_session=${owner.session()}`;
    expect((await server.call("GET", "/api/v1/streams", { headers: { cookie } })).status).toBe(401);
    const { key } = await server.key(brandId);
    expect((await server.call("GET", `${API}/modes/test/overview`, { key })).status).toBe(401);
  });

  it("refuses a changing request without the CSRF token or from another origin", async () => {
    const owner = await member(server, brandId, "csrf@example.com");
    const body = { name: "x", scopes: ["streams:read"] };
    expect((await owner.send("POST", "/modes/test/keys", body, { "x-csrf-token": "" })).body.error.code).toBe("csrf_failed");
    expect((await owner.send("POST", "/modes/test/keys", body, { origin: "https://evil.example" })).body.error.code).toBe("csrf_failed");
    const anonymous = browser(server);
    expect((await anonymous.send("POST", "/session", { email: "csrf@example.com", password: PASSWORD })).status).toBe(403);
  });

  it("gives a new session id on sign-in, so a planted one signs nobody in", async () => {
    await member(server, brandId, "fixation@example.com");
    const victim = browser(server);
    await victim.send("GET", "/session");
    victim.cookies.set("lsh_session", "planted-by-attacker");
    const signedIn = await victim.send("POST", "/session", { email: "fixation@example.com", password: PASSWORD });
    expect(signedIn.status).toBe(200);
    expect(victim.session()).not.toBe("planted-by-attacker");
    const attacker = browser(server);
    attacker.cookies.set("lsh_session", "planted-by-attacker");
    expect((await attacker.send("GET", "/session")).body.signed_in).toBe(false);
  });

  it("enforces roles on the server: a viewer reads but cannot create a key or invite", async () => {
    const viewer = await member(server, brandId, "viewer@example.com", "viewer");
    expect((await viewer.send("GET", "/modes/test/keys")).status).toBe(200);
    const refused = await viewer.send("POST", "/modes/test/keys", { name: "x", scopes: ["streams:read"] });
    expect([refused.status, refused.body.error.code]).toEqual([403, "forbidden"]);
    const developer = await member(server, brandId, "dev@example.com", "developer");
    expect((await developer.send("POST", "/modes/test/keys", { name: "d", scopes: ["streams:read"] })).status).toBe(201);
    expect((await developer.send("POST", "/members/invitations", { email: "x@example.com" })).status).toBe(403);
    expect((await developer.send("GET", "/audit-log")).status).toBe(403);
  });

  it("keeps each brand to itself: brand B's ids answer 404", async () => {
    const a = await member(server, brandId, "brand-a@example.com");
    const other = await server.brand();
    const b = await member(server, other.id, "brand-b@example.com");
    const key = await b.send("POST", "/modes/test/keys", { name: "b", scopes: ["streams:read"] });
    const stream = await b.send("POST", "/modes/test/streams", streamBody());
    const hook = await b.send("POST", "/modes/test/webhooks", { url: "http://127.0.0.1:9/hook", events: ["stream.started"] });
    expect((await a.send("DELETE", `/modes/test/keys/${key.body.key_id}`)).status).toBe(404);
    expect((await a.send("GET", `/modes/test/streams/${stream.body.stream_id ?? stream.body.id}`)).status).toBe(404);
    expect((await a.send("DELETE", `/modes/test/webhooks/${hook.body.webhook_id}`)).status).toBe(404);
    expect((await a.send("GET", `/modes/test/webhooks/${hook.body.webhook_id}/deliveries`)).status).toBe(404);
    const members = await b.send("GET", "/members");
    expect((await a.send("PATCH", `/members/${members.body.members[0].member_id}`, { role: "viewer" })).status).toBe(404);
  });

  it("starts a stream with source dashboard, seen by the API; analytics match GET /api/v1/analytics", async () => {
    const owner = await member(server, brandId, "streams@example.com");
    const started = await owner.send("POST", "/modes/test/streams", streamBody());
    expect(started.status).toBe(201);
    const { key } = await server.key(brandId);
    const listed = await server.call("GET", "/api/v1/streams", { key });
    expect(listed.body.streams.find((stream: { stream_id?: string; id?: string }) => (stream.stream_id ?? stream.id) === (started.body.stream_id ?? started.body.id)).source).toBe("dashboard");
    const mine = await owner.send("GET", "/modes/test/analytics?period=7d");
    const api = await server.call("GET", "/api/v1/analytics?period=7d", { key });
    expect(mine.body).toEqual(api.body);
    const overview = await owner.send("GET", "/modes/test/overview");
    expect(overview.body).toMatchObject({ brand: { brand_id: brandId, plan: "starter" }, mode: "test", max_active_streams: 3 });
    expect(overview.body.active_streams).toBeGreaterThanOrEqual(1);
  });

  it("shows a webhook's deliveries with each attempt, its duration and signature", async () => {
    const owner = await member(server, brandId, "hooks@example.com");
    const hook = await owner.send("POST", "/modes/test/webhooks", { url: "http://127.0.0.1:9/hook", events: ["stream.started"] });
    expect(hook.status).toBe(201);
    expect(hook.body.secret).toMatch(/^whsec_/);
    await owner.send("POST", "/modes/test/streams", streamBody());
    await server.deliver();
    await server.deliver();
    const log = await owner.send("GET", `/modes/test/webhooks/${hook.body.webhook_id}/deliveries`);
    expect(log.status).toBe(200);
    const [delivery] = log.body.deliveries;
    expect(delivery).toMatchObject({ event_type: "stream.started", attempts: 1, status: "pending", response_status: 500, next_attempt_at: expect.any(String) });
    const detail = await owner.send("GET", `/modes/test/webhooks/${hook.body.webhook_id}/deliveries/${delivery.delivery_id}`);
    expect(JSON.parse(detail.body.payload)).toMatchObject({ type: "stream.started" });
    expect(detail.body.attempts[0]).toMatchObject({ attempt: 1, duration_ms: expect.any(Number), signature: expect.stringMatching(/^t=\d+,v1=[0-9a-f]{64}$/) });
    expect(detail.body.attempts[0].response_status).toBe(500);
    const succeeded = await owner.send("GET", `/modes/test/webhooks/${hook.body.webhook_id}/deliveries?outcome=succeeded`);
    expect(succeeded.body.deliveries).toEqual([]);
    expect((await owner.send("GET", `/modes/test/webhooks/${hook.body.webhook_id}/deliveries?outcome=pending`)).body.deliveries).toHaveLength(1);
  });

  it("records every change in the audit log, readable by owners", async () => {
    const owner = await member(server, brandId, "audit@example.com");
    const key = await owner.send("POST", "/modes/test/keys", { name: "audited", scopes: ["streams:read"] });
    const log = await owner.send("GET", "/audit-log");
    expect(log.body.entries).toContainEqual(expect.objectContaining({ actor: "audit@example.com", action: "key.created", mode: "test", target_id: key.body.key_id }));
    expect(JSON.stringify(log.body)).not.toContain(key.body.key);
  });

  it("password change ends the other sessions; sign out everywhere ends all", async () => {
    const first = await member(server, brandId, "pw@example.com");
    const second = browser(server);
    await second.send("GET", "/session");
    expect((await second.send("POST", "/session", { email: "pw@example.com", password: PASSWORD })).status).toBe(200);
    const changed = await first.send("PUT", "/account/password", { current_password: PASSWORD, new_password: `${PASSWORD} two` });
    expect(changed.body.sessions_revoked).toBe(1);
    expect((await second.send("GET", "/modes/test/overview")).status).toBe(401);
    expect((await first.send("GET", "/modes/test/overview")).status).toBe(200);
    expect((await first.send("POST", "/sessions/revoke-all")).status).toBe(200);
    expect((await first.send("GET", "/modes/test/overview")).status).toBe(401);
  });

  it("signs in with TOTP once it is on, and a recovery code works once", async () => {
    const owner = await member(server, brandId, "totp@example.com");
    const { body } = await owner.send("POST", "/account/totp");
    const codes = await owner.send("POST", "/account/totp/confirm", { code: await generate({ secret: body.secret, epoch: Math.floor(server.clock().getTime() / 1000) }) });
    expect(codes.body.recovery_codes).toHaveLength(10);
    const next = browser(server);
    await next.send("GET", "/session");
    const asked = await next.send("POST", "/session", { email: "totp@example.com", password: PASSWORD });
    expect(asked.body.error.code).toBe("totp_required");
    expect((await next.send("POST", "/session", { email: "totp@example.com", password: PASSWORD, totp_code: codes.body.recovery_codes[0] })).status).toBe(200);
    const reused = browser(server);
    await reused.send("GET", "/session");
    expect((await reused.send("POST", "/session", { email: "totp@example.com", password: PASSWORD, totp_code: codes.body.recovery_codes[0] })).status).toBe(401);
  });

  it("limits failed sign-ins per account with a message that says how long to wait", async () => {
    await member(server, brandId, "limited@example.com");
    const guesser = browser(server);
    await guesser.send("GET", "/session");
    for (let i = 0; i < 5; i++) expect((await guesser.send("POST", "/session", { email: "limited@example.com", password: "wrong wrong wrong" })).status).toBe(401);
    const limited = await guesser.send("POST", "/session", { email: "limited@example.com", password: PASSWORD });
    expect([limited.status, limited.body.error.code]).toEqual([429, "rate_limited"]);
    expect(limited.body.error.message).toMatch(/Wait \d+ minutes?/);
    server.clock.advance(16 * 60_000);
    expect((await guesser.send("POST", "/session", { email: "limited@example.com", password: PASSWORD })).status).toBe(200);
  });

  it("ends a session after the idle expiry", async () => {
    const owner = await member(server, brandId, "idle@example.com");
    server.clock.advance(13 * 60 * 60_000);
    expect((await owner.send("GET", "/modes/test/overview")).status).toBe(401);
  });

  it("answers the app's paths under /dashboard with a strict CSP", async () => {
    const page = await server.call("GET", "/dashboard/keys");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
  });
});
