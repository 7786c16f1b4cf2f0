// The dashboard's API over HTTP, on both engines: invitations, sign-in, sessions, CSRF, roles,
// brand scoping, cookie-vs-key separation, the sign-in limit and session expiry.
import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failingDatabase } from "../../testkit/failing-database.ts";
import {
  ADMIN_TOKEN,
  availableEngines,
  freshDatabase,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";
import { browser, DASHBOARD_API, invite, member, PASSWORD, setCookieLine } from "../../testkit/dashboard-browser.ts";

const API = DASHBOARD_API;

describe.each(availableEngines())("dashboard API on %s", (engine) => {
  let server: TestServer;
  let brandId: string;
  beforeAll(async () => {
    // Every webhook attempt is answered 500: the delivery log shows the failure and its retry.
    const transport = {
      send: async () => ({ ok: false as const, status: 500, error: "HTTP 500", body: "<h1>upstream down</h1>" }),
    };
    server = await startTestServer({ engine, config: { webhookAllowHosts: ["127.0.0.1"] }, delivery: { transport } });
    brandId = (await server.brand({ plan: "starter" })).id;
  });
  afterAll(() => server.close());

  it("invitation link → password → signed in; the link works once and is stored hashed", async () => {
    const token = await invite(server, brandId, "Owner@Example.com");
    const stored = await server.db.query<{ token_hash: string }>(
      "SELECT token_hash FROM invitations WHERE email = 'owner@example.com'",
    );
    expect(JSON.stringify(stored)).not.toContain(token);
    const owner = browser(server);
    expect((await owner.send("GET", "/session")).body).toMatchObject({ signed_in: false, member: null });
    expect((await owner.send("POST", "/invitations/inspect", { token })).body).toMatchObject({
      email: "owner@example.com",
      role: "owner",
    });
    const weak = await owner.send("POST", "/invitations/accept", { token, password: "password1234" });
    expect([weak.status, weak.body.error.code]).toEqual([400, "weak_password"]);
    const accepted = await owner.send("POST", "/invitations/accept", { token, password: PASSWORD });
    expect(accepted.status).toBe(201);
    expect(accepted.body).toMatchObject({
      signed_in: true,
      member: { email: "owner@example.com", role: "owner" },
      brand: { brand_id: brandId },
    });
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
    const hash = await server.db.query<{ password_hash: string }>(
      "SELECT password_hash FROM members WHERE email = 'owner@example.com'",
    );
    expect(hash[0]!.password_hash).toMatch(/^\$argon2id\$/);
  });

  it("a key made in the dashboard is shown once, works on /api/v1, and is 401 after revocation", async () => {
    const owner = await member(server, brandId, "keys@example.com");
    const created = await owner.send("POST", "/modes/test/keys", {
      name: "ci",
      scopes: ["streams:read", "streams:write"],
    });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^svc_test_/);
    const keyRow = async () =>
      (await owner.send("GET", "/modes/test/keys")).body.keys.find(
        (one: { key_id: string }) => one.key_id === created.body.key_id,
      );
    expect((await keyRow()).last_used_at).toBeNull();
    const usedAt = server.clock().toISOString();
    expect((await server.call("GET", "/api/v1/streams", { key: created.body.key })).status).toBe(200);
    // The use is written after the answer (never holding the request): wait for it.
    await expect.poll(async () => (await keyRow()).last_used_at).toBe(usedAt);
    const listed = await owner.send("GET", "/modes/test/keys");
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    expect(listed.body.keys).toContainEqual(
      expect.objectContaining({
        key_id: created.body.key_id,
        name: "ci",
        key_hint: `svc_test_…${created.body.key.slice(-4)}`,
        last_used_at: usedAt,
        revoked_at: null,
      }),
    );
    // Only the hash and the last four are stored: the key itself is in no column.
    const stored = await server.db.query("SELECT * FROM api_keys WHERE id = $1", [created.body.key_id]);
    expect(JSON.stringify(stored)).not.toContain(created.body.key);
    // One active key per name and mode: another "ci" is refused, a live "ci" is another mode's.
    const duplicate = await owner.send("POST", "/modes/test/keys", { name: "ci", scopes: ["streams:read"] });
    expect([duplicate.status, duplicate.body.error.code]).toEqual([409, "key_name_taken"]);
    expect(duplicate.body.error.message).toContain(`svc_test_…${created.body.key.slice(-4)}`);
    // Written at most once a minute: a use 30 s later is not shown, one a minute later is.
    server.clock.advance(30_000);
    expect((await server.call("GET", "/api/v1/streams", { key: created.body.key })).status).toBe(200);
    expect((await keyRow()).last_used_at).toBe(usedAt);
    server.clock.advance(30_000);
    expect((await server.call("GET", "/api/v1/", { key: created.body.key })).status).toBe(200);
    await expect.poll(async () => (await keyRow()).last_used_at).toBe(server.clock().toISOString());
    expect((await owner.send("DELETE", `/modes/test/keys/${created.body.key_id}`)).status).toBe(200);
    expect((await server.call("GET", "/api/v1/streams", { key: created.body.key })).status).toBe(401);
    // Revoked, its name is free again.
    expect((await owner.send("POST", "/modes/test/keys", { name: "ci", scopes: ["streams:read"] })).status).toBe(201);
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
    expect((await owner.send("POST", "/modes/test/keys", body, { "x-csrf-token": "" })).body.error.code).toBe(
      "csrf_failed",
    );
    expect(
      (await owner.send("POST", "/modes/test/keys", body, { origin: "https://evil.example" })).body.error.code,
    ).toBe("csrf_failed");
    const anonymous = browser(server);
    expect((await anonymous.send("POST", "/session", { email: "csrf@example.com", password: PASSWORD })).status).toBe(
      403,
    );
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
    expect((await developer.send("POST", "/modes/test/keys", { name: "d", scopes: ["streams:read"] })).status).toBe(
      201,
    );
    expect(
      (await developer.send("POST", "/members/invitations", { email: "x@example.com", role: "viewer" })).status,
    ).toBe(403);
    expect((await developer.send("GET", "/audit-log")).status).toBe(403);
  });

  it("keeps each brand to itself: brand B's ids answer 404", async () => {
    const a = await member(server, brandId, "brand-a@example.com");
    const other = await server.brand();
    const b = await member(server, other.id, "brand-b@example.com");
    const key = await b.send("POST", "/modes/test/keys", { name: "b", scopes: ["streams:read"] });
    const stream = await b.send("POST", "/modes/test/streams", streamBody());
    const hook = await server.call("POST", "/api/v1/webhooks", {
      key: (await server.key(other.id)).key,
      body: { url: "http://127.0.0.1:9/hook", events: ["stream.started"] },
    });
    expect((await a.send("DELETE", `/modes/test/keys/${key.body.key_id}`)).status).toBe(404);
    expect((await a.send("GET", `/modes/test/streams/${stream.body.stream_id ?? stream.body.id}`)).status).toBe(404);
    expect((await a.send("GET", `/modes/test/webhooks/${hook.body.webhook_id}/deliveries`)).status).toBe(404);
    const members = await b.send("GET", "/members");
    expect((await a.send("PATCH", `/members/${members.body.members[0].member_id}`, { role: "viewer" })).status).toBe(
      404,
    );
  });

  it("starts a stream with source dashboard, seen by the API; analytics match GET /api/v1/analytics", async () => {
    const owner = await member(server, brandId, "streams@example.com");
    const started = await owner.send("POST", "/modes/test/streams", streamBody());
    expect(started.status).toBe(201);
    const { key } = await server.key(brandId);
    const listed = await server.call("GET", "/api/v1/streams", { key });
    expect(
      listed.body.streams.find(
        (stream: { stream_id?: string; id?: string }) =>
          (stream.stream_id ?? stream.id) === (started.body.stream_id ?? started.body.id),
      ).source,
    ).toBe("dashboard");
    const mine = await owner.send("GET", "/modes/test/analytics?period=7d");
    const api = await server.call("GET", "/api/v1/analytics?period=7d", { key });
    expect(mine.body).toEqual(api.body);
    const overview = await owner.send("GET", "/modes/test/overview");
    expect(overview.body).toMatchObject({
      brand: { brand_id: brandId, plan: "starter" },
      mode: "test",
      max_active_streams: 3,
    });
    expect(overview.body.active_streams).toBeGreaterThanOrEqual(1);
  });

  it("shows a webhook's deliveries with each attempt, its duration and signature", async () => {
    const owner = await member(server, brandId, "hooks@example.com");
    const hook = await server.call("POST", "/api/v1/webhooks", {
      key: (await server.key(brandId)).key,
      body: { url: "http://127.0.0.1:9/hook", events: ["stream.started"] },
    });
    expect(hook.status).toBe(201);
    await owner.send("POST", "/modes/test/streams", streamBody());
    await server.deliver();
    await server.deliver();
    const log = await owner.send("GET", `/modes/test/webhooks/${hook.body.webhook_id}/deliveries`);
    expect(log.status).toBe(200);
    const [delivery] = log.body.deliveries;
    expect(delivery).toMatchObject({
      event_type: "stream.started",
      attempts: 1,
      status: "pending",
      response_status: 500,
      next_attempt_at: expect.any(String),
    });
    const detail = await owner.send(
      "GET",
      `/modes/test/webhooks/${hook.body.webhook_id}/deliveries/${delivery.delivery_id}`,
    );
    expect(JSON.parse(detail.body.payload)).toMatchObject({ type: "stream.started" });
    expect(detail.body.attempts[0]).toMatchObject({
      attempt: 1,
      duration_ms: expect.any(Number),
      signature: expect.stringMatching(/^t=\d+,v1=[0-9a-f]{64}$/),
    });
    expect(detail.body.attempts[0].response_status).toBe(500);
    // The receiver's answer, as it sent it: text, never markup the app would render.
    expect(detail.body.attempts[0].response_body).toBe("<h1>upstream down</h1>");
    const succeeded = await owner.send(
      "GET",
      `/modes/test/webhooks/${hook.body.webhook_id}/deliveries?outcome=succeeded`,
    );
    expect(succeeded.body.deliveries).toEqual([]);
    expect(
      (await owner.send("GET", `/modes/test/webhooks/${hook.body.webhook_id}/deliveries?outcome=pending`)).body
        .deliveries,
    ).toHaveLength(1);
  });

  it("registers and deletes webhooks only through the API: the dashboard API has no such operation", async () => {
    const brand = await server.brand();
    const developer = await member(server, brand.id, "no-hooks@example.com", "developer");
    const { key } = await server.key(brand.id);
    const hook = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: "http://127.0.0.1:9/api-only", events: ["stream.ended"] },
    });
    expect(hook.status).toBe(201);
    const register = await developer.send("POST", "/modes/test/webhooks", {
      url: "http://127.0.0.1:9/from-dashboard",
      events: ["stream.ended"],
    });
    const remove = await developer.send("DELETE", `/modes/test/webhooks/${hook.body.webhook_id}`);
    expect([register.status, remove.status]).toEqual([404, 404]);
    const listed = (await developer.send("GET", "/modes/test/webhooks")).body.webhooks;
    expect(listed.map((one: { url: string }) => one.url)).toEqual(["http://127.0.0.1:9/api-only"]);
  });

  it("records every change in the audit log, readable by owners", async () => {
    const owner = await member(server, brandId, "audit@example.com");
    const key = await owner.send("POST", "/modes/test/keys", { name: "audited", scopes: ["streams:read"] });
    const log = await owner.send("GET", "/audit-log");
    expect(log.body.entries).toContainEqual(
      expect.objectContaining({
        actor: "audit@example.com",
        action: "key.created",
        mode: "test",
        target_id: key.body.key_id,
      }),
    );
    expect(JSON.stringify(log.body)).not.toContain(key.body.key);
  });

  // What docs/dashboard.md (Roles) says: every entry carries the client's address; sign-in
  // entries also name it in their detail, and a client not signed in is named by it.
  it("records the client's address in every entry", async () => {
    const owner = await member(server, brandId, "where@example.com");
    const other = browser(server);
    await other.send("GET", "/session");
    expect((await other.send("POST", "/session", { email: "where@example.com", password: "wrong" })).status).toBe(401);
    expect((await other.send("POST", "/session", { email: "where@example.com", password: PASSWORD })).status).toBe(200);
    await owner.send("POST", "/modes/test/keys", { name: "placed", scopes: ["streams:read"] });
    const entries: { actor: string; action: string; detail: string; address: string | null }[] = (
      await owner.send("GET", "/audit-log")
    ).body.entries;
    const mine = entries.filter((entry) => `${entry.actor} ${entry.detail}`.includes("where@example.com"));
    const address = /127\.0\.0\.1/;
    const byAction = (action: string) => mine.find((entry) => entry.action === action)!;
    expect(byAction("session.sign_in_failed").actor).toMatch(address);
    expect(byAction("session.signed_in").detail).toMatch(address);
    expect(byAction("key.created").actor).toBe("where@example.com");
    for (const action of ["member.joined", "session.sign_in_failed", "session.signed_in", "key.created"])
      expect(byAction(action).address, action).toMatch(address);
  });

  it("writes each key and stream change with its audit entry, or neither", async () => {
    const brand = await server.brand();
    const owner = await member(server, brand.id, "atomic@example.com");
    const key = (await owner.send("POST", "/modes/test/keys", { name: "kept", scopes: ["streams:read"] })).body;
    const stream = (await owner.send("POST", "/modes/test/streams", streamBody())).body;
    const state = async () => ({
      keys: (await owner.send("GET", "/modes/test/keys")).body.keys.map(
        (one: { name: string; revoked_at: string | null }) => [one.name, one.revoked_at],
      ),
      streams: (await owner.send("GET", "/modes/test/streams")).body.streams.map(
        (one: { status: string }) => one.status,
      ),
    });
    const before = await state();
    expect(before).toEqual({ keys: [["kept", null]], streams: ["live"] });
    // The brand's audit entries now fail to insert: every change must fail with them.
    await server.db.exec(
      `ALTER TABLE audit_log ADD CONSTRAINT audit_refused CHECK (brand_id <> '${brand.id}') NOT VALID`,
    );
    try {
      const failed = [
        await owner.send("POST", "/modes/test/keys", { name: "unaudited", scopes: ["streams:read"] }),
        await owner.send("DELETE", `/modes/test/keys/${key.key_id}`),
        await owner.send("POST", "/modes/test/streams", streamBody()),
        await owner.send("DELETE", `/modes/test/streams/${stream.stream_id}`),
      ];
      expect(failed.map((response) => response.status >= 400)).toEqual(failed.map(() => true));
      expect(await state()).toEqual(before);
    } finally {
      await server.db.exec("ALTER TABLE audit_log DROP CONSTRAINT audit_refused");
    }
    expect((await owner.send("DELETE", `/modes/test/keys/${key.key_id}`)).status).toBe(200);
    expect((await owner.send("DELETE", `/modes/test/streams/${stream.stream_id}`)).status).toBe(200);
    // The revocation names the key as the list shows it.
    expect((await owner.send("GET", "/audit-log")).body.entries).toContainEqual(
      expect.objectContaining({
        action: "key.revoked",
        target_id: key.key_id,
        detail: `Revoked key "kept" (svc_test_…${key.key.slice(-4)}).`,
      }),
    );
    const log = (await owner.send("GET", "/audit-log")).body.entries.map(
      (entry: { action: string; target_id: string }) => `${entry.action} ${entry.target_id}`,
    );
    expect(log).toEqual(
      expect.arrayContaining([
        `key.created ${key.key_id}`,
        `key.revoked ${key.key_id}`,
        `stream.started ${stream.stream_id}`,
        `stream.ended ${stream.stream_id}`,
      ]),
    );
    expect(log.filter((line: string) => /^(key|webhook|stream)\./.test(line))).toHaveLength(4);
  });

  it("password change ends the other sessions; sign out everywhere ends all", async () => {
    const first = await member(server, brandId, "pw@example.com");
    const second = browser(server);
    await second.send("GET", "/session");
    expect((await second.send("POST", "/session", { email: "pw@example.com", password: PASSWORD })).status).toBe(200);
    const changed = await first.send("PUT", "/account/password", {
      current_password: PASSWORD,
      new_password: `${PASSWORD} two`,
    });
    expect(changed.body.sessions_revoked).toBe(1);
    expect((await second.send("GET", "/modes/test/overview")).status).toBe(401);
    expect((await first.send("GET", "/modes/test/overview")).status).toBe(200);
    expect((await first.send("POST", "/sessions/revoke-all")).status).toBe(200);
    expect((await first.send("GET", "/modes/test/overview")).status).toBe(401);
  });

  it("signs in with TOTP once it is on, and a recovery code works once", async () => {
    const owner = await member(server, brandId, "totp@example.com");
    const { body } = await owner.send("POST", "/account/totp", { password: PASSWORD });
    for (const code of ["12345", "abcdef", "x".repeat(32)]) {
      const wrong = await owner.send("POST", "/account/totp/confirm", { code });
      expect([wrong.status, wrong.body.error.code], code).toEqual([401, "invalid_credentials"]);
    }
    const codes = await owner.send("POST", "/account/totp/confirm", {
      code: await generate({ secret: body.secret, epoch: Math.floor(server.clock().getTime() / 1000) }),
    });
    expect(codes.body.recovery_codes).toHaveLength(10);
    const next = browser(server);
    await next.send("GET", "/session");
    const asked = await next.send("POST", "/session", { email: "totp@example.com", password: PASSWORD });
    expect(asked.body.error.code).toBe("totp_required");
    expect(
      (
        await next.send("POST", "/session", {
          email: "totp@example.com",
          password: PASSWORD,
          totp_code: codes.body.recovery_codes[0],
        })
      ).status,
    ).toBe(200);
    const reused = browser(server);
    await reused.send("GET", "/session");
    expect(
      (
        await reused.send("POST", "/session", {
          email: "totp@example.com",
          password: PASSWORD,
          totp_code: codes.body.recovery_codes[0],
        })
      ).status,
    ).toBe(401);
  });

  it("turns TOTP off with the password and the current code; sign-in then asks for no code", async () => {
    const owner = await member(server, brandId, "totp-off@example.com");
    const { body } = await owner.send("POST", "/account/totp", { password: PASSWORD });
    const codeNow = () => generate({ secret: body.secret, epoch: Math.floor(server.clock().getTime() / 1000) });
    await owner.send("POST", "/account/totp/confirm", { code: await codeNow() });
    const wrong = await owner.send("POST", "/account/totp/disable", { password: "not the password at all" });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, "invalid_credentials"]);
    // The password alone is not enough while two-factor is on.
    const passwordOnly = await owner.send("POST", "/account/totp/disable", { password: PASSWORD });
    expect([passwordOnly.status, passwordOnly.body.error.code]).toEqual([401, "totp_required"]);
    // The code that confirmed enrolment is used up: the next time step's code is needed.
    const replayed = await owner.send("POST", "/account/totp/disable", {
      password: PASSWORD,
      totp_code: await codeNow(),
    });
    expect([replayed.status, replayed.body.error.code]).toEqual([401, "invalid_credentials"]);
    expect((await owner.send("GET", "/session")).body.member.totp_enabled).toBe(true);
    server.clock.advance(30_000);
    const off = await owner.send("POST", "/account/totp/disable", { password: PASSWORD, totp_code: await codeNow() });
    expect([off.status, off.body.totp_enabled]).toEqual([200, false]);
    const next = browser(server);
    await next.send("GET", "/session");
    expect((await next.send("POST", "/session", { email: "totp-off@example.com", password: PASSWORD })).status).toBe(
      200,
    );
    const log = (await owner.send("GET", "/audit-log")).body.entries.map((entry: { action: string }) => entry.action);
    expect(log).toEqual(expect.arrayContaining(["member.totp_enabled", "member.totp_disabled"]));
  });

  it("lets an owner change roles, keeping one owner; the new role applies at once", async () => {
    const brand = await server.brand();
    const owner = await member(server, brand.id, "roles-owner@example.com");
    const dev = await member(server, brand.id, "roles-dev@example.com", "developer");
    const ids = Object.fromEntries(
      (await owner.send("GET", "/members")).body.members.map((one: { email: string; member_id: string }) => [
        one.email,
        one.member_id,
      ]),
    );
    const [ownerId, devId] = [ids["roles-owner@example.com"], ids["roles-dev@example.com"]];
    // The only owner can neither step down nor leave.
    const demote = await owner.send("PATCH", `/members/${ownerId}`, { role: "developer" });
    expect([demote.status, demote.body.error.code]).toEqual([409, "last_owner"]);
    const leave = await owner.send("DELETE", `/members/${ownerId}`);
    expect([leave.status, leave.body.error.code]).toEqual([409, "last_owner"]);
    // A developer cannot change roles, not even their own.
    expect((await dev.send("PATCH", `/members/${devId}`, { role: "owner" })).status).toBe(403);
    const viewer = await owner.send("PATCH", `/members/${devId}`, { role: "viewer" });
    expect(viewer.body).toMatchObject({ member_id: devId, role: "viewer" });
    expect((await dev.send("POST", "/modes/test/keys", { name: "x", scopes: ["streams:read"] })).status).toBe(403);
    expect((await owner.send("PATCH", `/members/${devId}`, { role: "owner", password: PASSWORD })).body.role).toBe(
      "owner",
    );
    // With a second owner the first may step down.
    expect((await owner.send("PATCH", `/members/${ownerId}`, { role: "developer" })).body.role).toBe("developer");
    expect((await owner.send("PATCH", `/members/${devId}`, { role: "viewer" })).status).toBe(403);
    expect((await dev.send("PATCH", `/members/${devId}`, { role: "viewer" })).body.error.code).toBe("last_owner");
    const log = (await dev.send("GET", "/audit-log")).body.entries.filter(
      (entry: { action: string }) => entry.action === "member.role_changed",
    );
    // Made at the same instant (the test clock stands still), so in no particular order.
    expect(log.map((entry: { actor: string; detail: string }) => `${entry.actor}: ${entry.detail}`).sort()).toEqual([
      "roles-owner@example.com: roles-dev@example.com: developer → viewer.",
      "roles-owner@example.com: roles-dev@example.com: viewer → owner.",
      "roles-owner@example.com: roles-owner@example.com: owner → developer.",
    ]);
  });

  it("lets an owner remove a member, whose sessions end at once", async () => {
    const brand = await server.brand();
    const owner = await member(server, brand.id, "remove-owner@example.com");
    const gone = await member(server, brand.id, "removed@example.com", "developer");
    const goneId = (await owner.send("GET", "/members")).body.members.find(
      (one: { email: string }) => one.email === "removed@example.com",
    ).member_id;
    expect((await gone.send("DELETE", `/members/${goneId}`)).status).toBe(403);
    expect((await owner.send("DELETE", `/members/${goneId}`)).body).toEqual({ member_id: goneId, removed: true });
    expect((await gone.send("GET", "/modes/test/overview")).status).toBe(401);
    const again = browser(server);
    await again.send("GET", "/session");
    expect(
      (await again.send("POST", "/session", { email: "removed@example.com", password: PASSWORD })).body.error.code,
    ).toBe("invalid_credentials");
    expect((await owner.send("GET", "/members")).body.members.map((one: { email: string }) => one.email)).toEqual([
      "remove-owner@example.com",
    ]);
    expect((await owner.send("DELETE", `/members/${goneId}`)).status).toBe(404);
    expect((await owner.send("GET", "/audit-log")).body.entries).toContainEqual(
      expect.objectContaining({ actor: "remove-owner@example.com", action: "member.removed", target_id: goneId }),
    );
  });

  it("lets an owner invite a removed member again: a new membership, the old one stays removed", async () => {
    const brand = await server.brand();
    const owner = await member(server, brand.id, "rejoin-owner@example.com");
    const before = await member(server, brand.id, "rejoin@example.com", "developer");
    const removedId = (await owner.send("GET", "/members")).body.members.find(
      (one: { email: string }) => one.email === "rejoin@example.com",
    ).member_id;
    expect((await owner.send("DELETE", `/members/${removedId}`)).status).toBe(200);

    const invited = await owner.send("POST", "/members/invitations", { email: "Rejoin@Example.com", role: "viewer" });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ email: "rejoin@example.com", role: "viewer" });
    // The invitation brings back nothing of the old membership: its session stays ended.
    expect((await before.send("GET", "/modes/test/overview")).status).toBe(401);

    const back = browser(server);
    await back.send("GET", "/session");
    const newPassword = "another long and private passphrase";
    const accepted = await back.send("POST", "/invitations/accept", {
      token: invited.body.url.split("#")[1],
      password: newPassword,
    });
    expect(accepted.status).toBe(201);
    expect(accepted.body.member).toMatchObject({ email: "rejoin@example.com", role: "viewer", totp_enabled: false });
    const rejoinedId = accepted.body.member.member_id;
    expect(rejoinedId).not.toBe(removedId);
    expect((await back.send("GET", "/modes/test/overview")).status).toBe(200);

    // The old membership stays removed: not listed, not changeable, its row kept with its removal.
    const listed = (await owner.send("GET", "/members")).body.members.filter(
      (one: { email: string }) => one.email === "rejoin@example.com",
    );
    expect(listed.map((one: { member_id: string }) => one.member_id)).toEqual([rejoinedId]);
    expect((await owner.send("DELETE", `/members/${removedId}`)).status).toBe(404);
    expect((await owner.send("PATCH", `/members/${removedId}`, { role: "owner", password: PASSWORD })).status).toBe(
      404,
    );
    const rows = await server.db.query<{ id: string; removed: boolean }>(
      "SELECT id, removed_at IS NOT NULL AS removed FROM members WHERE email = 'rejoin@example.com'",
    );
    expect(rows.map((row) => `${row.id} ${row.removed}`).sort()).toEqual(
      [`${removedId} true`, `${rejoinedId} false`].sort(),
    );

    // Signing in takes the new password; the old one no longer works.
    const other = browser(server);
    await other.send("GET", "/session");
    expect(
      (await other.send("POST", "/session", { email: "rejoin@example.com", password: PASSWORD })).body.error.code,
    ).toBe("invalid_credentials");
    expect(
      (await other.send("POST", "/session", { email: "rejoin@example.com", password: newPassword })).body.member,
    ).toMatchObject({ member_id: rejoinedId });

    // Once a member again, the email cannot be invited twice.
    const taken = await owner.send("POST", "/members/invitations", { email: "rejoin@example.com", role: "viewer" });
    expect([taken.status, taken.body.error.code]).toEqual([409, "member_exists"]);

    const log = (await owner.send("GET", "/audit-log")).body.entries.map(
      (entry: { action: string; target_id: string }) => `${entry.action} ${entry.target_id}`,
    );
    expect(log).toEqual(
      expect.arrayContaining([
        `member.removed ${removedId}`,
        `invitation.created ${invited.body.invitation_id}`,
        `member.joined ${rejoinedId}`,
      ]),
    );
  });

  it("accepts one of two invitations for one email accepted at once; the other is 409 member_exists", async () => {
    // Two invitations of one brand for one email: both acceptances pass the email check before
    // either inserts; the first is held at the insert, the second waits for the brand's lock
    // (on the embedded database, for the first transaction), then finds the member made.
    const fresh = await freshDatabase(engine);
    const slow = failingDatabase(fresh.db);
    const racing = await startTestServer({ engine, database: slow.db });
    try {
      const email = "twice@example.com";
      const brand = await racing.brand();
      const tokens = [await invite(racing, brand.id, email), await invite(racing, brand.id, email)];
      slow.holdOn(/INSERT INTO members/);
      const answers = Promise.all(
        tokens.map(async (token) => {
          const invitee = browser(racing);
          await invitee.send("GET", "/session");
          return invitee.send("POST", "/invitations/accept", { token, password: PASSWORD });
        }),
      );
      for (let waited = 0; slow.waiting() < 1 && waited < 10_000; waited += 25)
        await new Promise((resolve) => setTimeout(resolve, 25));
      expect(slow.waiting()).toBe(1);
      // Time for the second acceptance to reach the brand's lock.
      await new Promise((resolve) => setTimeout(resolve, 500));
      slow.holdOn(null);
      const outcomes = (await answers).map((answer) => [answer.status, answer.body.error?.code ?? null]).sort();
      expect(outcomes).toEqual([
        [201, null],
        [409, "member_exists"],
      ]);
    } finally {
      await racing.close();
      await fresh.drop();
    }
  });

  it("lets an owner invite and revoke an invitation, whose link then stops working", async () => {
    const brand = await server.brand();
    const owner = await member(server, brand.id, "inviter@example.com");
    const invited = await owner.send("POST", "/members/invitations", { email: "Later@Example.com", role: "viewer" });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({
      email: "later@example.com",
      role: "viewer",
      url: expect.stringContaining("/dashboard/invitation#"),
    });
    const token = invited.body.url.split("#")[1];
    expect((await owner.send("GET", "/members")).body.invitations).toEqual([
      expect.objectContaining({ invitation_id: invited.body.invitation_id, email: "later@example.com" }),
    ]);
    const taken = await owner.send("POST", "/members/invitations", { email: "inviter@example.com", role: "viewer" });
    expect([taken.status, taken.body.error.code]).toEqual([409, "member_exists"]);
    const revoked = await owner.send("DELETE", `/members/invitations/${invited.body.invitation_id}`);
    expect(revoked.body).toEqual({ invitation_id: invited.body.invitation_id, revoked: true });
    expect((await owner.send("GET", "/members")).body.invitations).toEqual([]);
    expect((await owner.send("DELETE", `/members/invitations/${invited.body.invitation_id}`)).status).toBe(404);
    const invitee = browser(server);
    await invitee.send("GET", "/session");
    expect((await invitee.send("POST", "/invitations/inspect", { token })).status).toBe(404);
    expect((await invitee.send("POST", "/invitations/accept", { token, password: PASSWORD })).status).toBe(404);
    const actions = (await owner.send("GET", "/audit-log")).body.entries.map(
      (entry: { action: string; target_id: string }) => `${entry.action} ${entry.target_id}`,
    );
    expect(actions).toEqual(
      expect.arrayContaining([
        `invitation.created ${invited.body.invitation_id}`,
        `invitation.revoked ${invited.body.invitation_id}`,
      ]),
    );
  });

  it("slows failed sign-ins from one address with a message that says how long to wait", async () => {
    await member(server, brandId, "limited@example.com");
    const guesser = browser(server);
    await guesser.send("GET", "/session");
    for (let i = 0; i < 5; i++)
      expect(
        (await guesser.send("POST", "/session", { email: "limited@example.com", password: "wrong wrong wrong" }))
          .status,
      ).toBe(401);
    const limited = await guesser.send("POST", "/session", { email: "limited@example.com", password: PASSWORD });
    expect([limited.status, limited.body.error.code]).toEqual([429, "rate_limited"]);
    expect(limited.body.error.message).toMatch(/Wait 1 s /);
    server.clock.advance(1_000);
    expect((await guesser.send("POST", "/session", { email: "limited@example.com", password: PASSWORD })).status).toBe(
      200,
    );
  });

  it("takes no Secure hint from X-Forwarded-Proto without TRUST_PROXY", async () => {
    const token = await invite(server, brandId, "no-proxy@example.com");
    const spoofed = browser(server, { headers: { "x-forwarded-proto": "https" } });
    expect(setCookieLine(await spoofed.send("GET", "/session"), "lsh_csrf")).not.toMatch(/Secure/);
    const accepted = await spoofed.send("POST", "/invitations/accept", { token, password: PASSWORD });
    expect(accepted.status).toBe(201);
    expect(setCookieLine(accepted, "lsh_session")).not.toMatch(/Secure/);
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

describe.each(availableEngines())(
  "dashboard sessions behind a proxy (TRUST_PROXY), with short lifetimes, on %s",
  (engine) => {
    let server: TestServer;
    let brandId: string;
    const IDLE_MS = 30 * 60_000;
    const ABSOLUTE_MS = 2 * 60 * 60_000;
    beforeAll(async () => {
      server = await startTestServer({
        engine,
        config: { trustProxy: ["loopback"], dashboardSession: { idleMs: IDLE_MS, absoluteMs: ABSOLUTE_MS } },
      });
      brandId = (await server.brand()).id;
    });
    afterAll(() => server.close());

    it("marks the cookies Secure when the proxy says https, and takes the https origin", async () => {
      const token = await invite(server, brandId, "proxied@example.com");
      const proxied = browser(server, {
        origin: `https://${new URL(server.baseUrl).host}`,
        headers: { "x-forwarded-proto": "https" },
      });
      // Over https the cookies are `__Host-` ones on Path=/, which no other host can toss in.
      expect(setCookieLine(await proxied.send("GET", "/session"), "__Host-lsh_csrf")).toMatch(/; Path=\/; Secure/);
      const accepted = await proxied.send("POST", "/invitations/accept", { token, password: PASSWORD });
      expect(accepted.status).toBe(201);
      expect(setCookieLine(accepted, "__Host-lsh_session")).toMatch(/; Path=\/; .*HttpOnly; Secure/);
      expect((await proxied.send("GET", "/modes/test/overview")).status).toBe(200);
      // Plain http through the same proxy: no Secure (the browser would drop the cookie).
      const plain = browser(server, { headers: { "x-forwarded-proto": "http" } });
      expect(setCookieLine(await plain.send("GET", "/session"), "lsh_csrf")).not.toMatch(/Secure/);
    });

    it("ends a session at the absolute expiry, however recently it was used", async () => {
      const owner = await member(server, brandId, "absolute@example.com");
      const signedInAt = server.clock().getTime();
      for (let minutes = 20; minutes < 120; minutes += 20) {
        server.clock.advance(20 * 60_000);
        expect((await owner.send("GET", "/modes/test/overview")).status, `${minutes} minutes in`).toBe(200);
      }
      // Used 100 minutes in: the idle expiry (130) lies past the absolute one (120), which shows.
      expect((await owner.send("GET", "/session")).body.expires_at).toBe(
        new Date(signedInAt + ABSOLUTE_MS).toISOString(),
      );
      server.clock.advance(20 * 60_000);
      expect((await owner.send("GET", "/modes/test/overview")).status).toBe(401);
      expect((await owner.send("GET", "/session")).body.signed_in).toBe(false);
    });

    it("ends a session unused for the configured idle time", async () => {
      const owner = await member(server, brandId, "short-idle@example.com");
      server.clock.advance(IDLE_MS - 60_000);
      expect((await owner.send("GET", "/modes/test/overview")).status).toBe(200);
      server.clock.advance(IDLE_MS);
      expect((await owner.send("GET", "/modes/test/overview")).status).toBe(401);
    });
  },
);
