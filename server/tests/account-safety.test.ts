// Accounts that neither a crowd nor a stranger can abuse, over HTTP on both engines: the sign-in
// throttle under a concurrent burst and from many addresses, the browsers known to an account
// (the device cookie), IPv6 clients counted by their /64, single-use TOTP codes, second factor for sensitive changes,
// invitations that die with their creator's authority, password-reset links and unlocking.
// Argon2 makes each member and sign-in cost a second or more on a loaded machine: the heavier
// cases have 90 s.
import { randomBytes } from "node:crypto";
import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../domain/secrets.ts";
import {
  ACCOUNT_BACKOFF,
  DEVICE_KEPT_MS,
  DEVICES_PER_MEMBER,
  PAIR_BACKOFF,
  rememberDevice,
} from "../services/members/sign-in-throttle.ts";
import { ADMIN_TOKEN, availableEngines, CONFIG, startTestServer, type TestServer } from "../../testkit/harness.ts";
import {
  type Browser,
  browser,
  invite,
  member,
  memberIdOf,
  PASSWORD,
  setCookieLine,
  signedOut,
} from "../../testkit/dashboard-browser.ts";

const TOTP_KEY = randomBytes(32);

async function auditActions(owner: Browser): Promise<Array<{ actor: string; action: string; detail: string }>> {
  return (await owner.send("GET", "/audit-log?limit=100")).body.entries;
}

describe.each(availableEngines())("account safety on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    // Behind a proxy, so that each test client can come from its own address. The burst opens
    // new PostgreSQL connections all at once: on a loaded machine that takes longer than 5 s.
    server = await startTestServer({
      engine,
      config: {
        trustProxy: ["loopback"],
        totpEncryption: { current: TOTP_KEY, previous: [] },
        databasePool: { ...CONFIG.databasePool, acquireTimeoutMs: 60_000 },
      },
    });
  }, 120_000);
  afterAll(() => server.close());

  it("checks at most the documented number of 200 wrong passwords sent at once; the right one still signs in", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "target@example.com");
    const addresses = ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"];
    const attackers = await Promise.all(addresses.map((address) => signedOut(server, address)));
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        attackers[i % 4]!.send("POST", "/session", { email: "target@example.com", password: `wrong guess ${i}` }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    const checked = statuses.filter((status) => status === 401).length;
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
    // docs/dashboard.md: at most the account's ceiling, whatever the number of addresses.
    expect(checked).toBeGreaterThan(0);
    expect(checked).toBeLessThanOrEqual(ACCOUNT_BACKOFF.free);

    // A browser new to the account waits, right password or not; the member's own browser (its
    // device cookie, from accepting the invitation) signs in, from an address new to the account.
    const newBrowser = await signedOut(server, "203.0.113.51");
    const waits = await newBrowser.send("POST", "/session", { email: "target@example.com", password: PASSWORD });
    expect([waits.status, waits.body.error.code]).toEqual([429, "rate_limited"]);
    const signedIn = await owner.send(
      "POST",
      "/session",
      { email: "target@example.com", password: PASSWORD },
      { "x-forwarded-for": "203.0.113.50" },
    );
    expect(signedIn.status).toBe(200);

    const log = await auditActions(owner);
    const failed = log.filter((entry) => entry.action === "session.sign_in_failed");
    expect(failed).toHaveLength(checked);
    expect(new Set(failed.map((entry) => entry.actor))).toEqual(new Set(addresses.map((a) => `client ${a}`)));
    const throttled = log.filter((entry) => entry.action === "session.sign_in_throttled");
    expect(throttled.length).toBeGreaterThan(0);
    expect(throttled.every((entry) => /refused for \d+ s after \d+ failed attempts/.test(entry.detail))).toBe(true);
    expect(log.find((entry) => entry.action === "session.signed_in")?.detail).toContain("from 203.0.113.50");
  }, 120_000);

  it("refuses a replayed TOTP code, from any client; the next time step's code works", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "replay@example.com");
    const { body } = await owner.send("POST", "/account/totp", { password: PASSWORD });
    const codeNow = () => generate({ secret: body.secret, epoch: Math.floor(server.clock().getTime() / 1000) });
    expect((await owner.send("POST", "/account/totp/confirm", { code: await codeNow() })).status).toBe(200);
    // Stored sealed (TOTP_ENCRYPTION_KEY), never as the secret itself.
    const [row] = await server.db.query<{ totp_secret: string }>(
      "SELECT totp_secret FROM members WHERE email = 'replay@example.com'",
    );
    expect(row!.totp_secret).toMatch(/^enc:v1:/);
    expect(row!.totp_secret).not.toContain(body.secret);

    server.clock.advance(30_000);
    const code = await codeNow();
    const first = await signedOut(server, "192.0.2.1");
    const credentials = { email: "replay@example.com", password: PASSWORD, totp_code: code };
    expect((await first.send("POST", "/session", credentials)).status).toBe(200);
    for (const address of ["192.0.2.2", "192.0.2.3"]) {
      const replay = await (await signedOut(server, address)).send("POST", "/session", credentials);
      expect([replay.status, replay.body.error.code], address).toEqual([401, "invalid_credentials"]);
    }
    server.clock.advance(30_000);
    const next = await signedOut(server, "192.0.2.4");
    expect((await next.send("POST", "/session", { ...credentials, totp_code: await codeNow() })).status).toBe(200);
  }, 90_000);

  it("needs the second factor to change the password or replace the recovery codes; flags recovery-code sign-ins", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "factor@example.com");
    const { body } = await owner.send("POST", "/account/totp", { password: PASSWORD });
    const codeNow = () => generate({ secret: body.secret, epoch: Math.floor(server.clock().getTime() / 1000) });
    const { recovery_codes: codes } = (await owner.send("POST", "/account/totp/confirm", { code: await codeNow() }))
      .body;
    const change = { current_password: PASSWORD, new_password: "a brand new long passphrase" };
    const refused = await owner.send("PUT", "/account/password", change);
    expect([refused.status, refused.body.error.code]).toEqual([401, "totp_required"]);
    const replaced = await owner.send("POST", "/account/recovery-codes", { password: PASSWORD });
    expect([replaced.status, replaced.body.error.code]).toEqual([401, "totp_required"]);
    const fresh = await owner.send("POST", "/account/recovery-codes", { password: PASSWORD, totp_code: codes[0] });
    expect(fresh.status).toBe(200);
    expect(fresh.body.recovery_codes).toHaveLength(10);
    // The old codes are gone; a new one signs in, and the sign-in is flagged in the audit log.
    const client = await signedOut(server, "192.0.2.20");
    const credentials = { email: "factor@example.com", password: PASSWORD };
    expect((await client.send("POST", "/session", { ...credentials, totp_code: codes[1] })).status).toBe(401);
    expect(
      (await client.send("POST", "/session", { ...credentials, totp_code: fresh.body.recovery_codes[0] })).status,
    ).toBe(200);
    server.clock.advance(30_000);
    expect((await owner.send("PUT", "/account/password", { ...change, totp_code: await codeNow() })).status).toBe(200);
    const log = await auditActions(owner);
    expect(log.find((entry) => entry.action === "session.signed_in_with_recovery_code")?.detail).toMatch(
      /from 192\.0\.2\.20 with a recovery code/,
    );
  }, 90_000);

  it("revokes the invitations of an owner who is removed or loses the owner role", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "first-owner@example.com");
    const rogue = await member(server, brandId, "rogue@example.com");
    const demoted = await member(server, brandId, "demoted@example.com");
    const backdoor = await rogue.send("POST", "/members/invitations", {
      email: "backdoor@evil.test",
      role: "owner",
      password: PASSWORD,
    });
    const sideDoor = await demoted.send("POST", "/members/invitations", {
      email: "side@evil.test",
      role: "owner",
      password: PASSWORD,
    });
    const kept = await owner.send("POST", "/members/invitations", { email: "kept@example.com", role: "viewer" });
    expect((await owner.send("DELETE", `/members/${await memberIdOf(owner, "rogue@example.com")}`)).status).toBe(200);
    const demote = await owner.send("PATCH", `/members/${await memberIdOf(owner, "demoted@example.com")}`, {
      role: "developer",
    });
    expect(demote.status).toBe(200);
    for (const invitation of [backdoor, sideDoor]) {
      const token = invitation.body.url.split("#")[1];
      const invitee = await signedOut(server);
      expect((await invitee.send("POST", "/invitations/inspect", { token })).status).toBe(404);
      expect((await invitee.send("POST", "/invitations/accept", { token, password: PASSWORD })).status).toBe(404);
    }
    expect((await owner.send("GET", "/members")).body.invitations.map((one: { email: string }) => one.email)).toEqual([
      "kept@example.com",
    ]);
    const accepted = await (await signedOut(server)).send("POST", "/invitations/accept", {
      token: kept.body.url.split("#")[1],
      password: PASSWORD,
    });
    expect(accepted.status).toBe(201);
  }, 90_000);

  it("issues a one-time reset link that expires in an hour and ends the member's sessions", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "reset-owner@example.com");
    const forgetful = await member(server, brandId, "forgetful@example.com", "developer");
    const id = await memberIdOf(owner, "forgetful@example.com");
    expect(
      (await forgetful.send("POST", "/members/password-resets", { member_id: id, password: PASSWORD })).status,
    ).toBe(403);
    const issued = await owner.send("POST", "/members/password-resets", { member_id: id, password: PASSWORD });
    expect(issued.status).toBe(201);
    expect(issued.body.url).toContain("/dashboard/reset#");
    const token = issued.body.url.split("#")[1];
    const stored = await server.db.query("SELECT * FROM password_resets");
    expect(JSON.stringify(stored)).not.toContain(token);

    const visitor = await signedOut(server);
    expect((await visitor.send("POST", "/password-resets/inspect", { token })).body).toMatchObject({
      email: "forgetful@example.com",
      turns_off_two_factor: false,
    });
    const weak = await visitor.send("POST", "/password-resets/complete", { token, password: "forgetful-example-2026" });
    expect([weak.status, weak.body.error.code]).toEqual([400, "weak_password"]);
    const newPassword = "a fresh and private passphrase";
    const done = await visitor.send("POST", "/password-resets/complete", { token, password: newPassword });
    expect(done.body).toEqual({ email: "forgetful@example.com", sessions_revoked: 1 });
    expect((await forgetful.send("GET", "/modes/test/overview")).status).toBe(401);
    const again = await visitor.send("POST", "/password-resets/complete", {
      token,
      password: "yet another passphrase",
    });
    expect(again.status).toBe(404);
    const client = await signedOut(server);
    expect((await client.send("POST", "/session", { email: "forgetful@example.com", password: PASSWORD })).status).toBe(
      401,
    );
    expect(
      (await client.send("POST", "/session", { email: "forgetful@example.com", password: newPassword })).status,
    ).toBe(200);

    const late = (
      await owner.send("POST", "/members/password-resets", { member_id: id, password: PASSWORD })
    ).body.url.split("#")[1];
    server.clock.advance(60 * 60_000);
    expect((await visitor.send("POST", "/password-resets/inspect", { token: late })).status).toBe(404);
    expect(
      (await visitor.send("POST", "/password-resets/complete", { token: late, password: newPassword })).status,
    ).toBe(404);
    const actions = (await auditActions(owner)).map((entry) => entry.action);
    expect(actions).toEqual(expect.arrayContaining(["member.password_reset_issued", "member.password_reset"]));
  }, 90_000);

  it("lets the operator reset a sole owner who lost password and second factor, and unlock a member", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "sole@example.com");
    const { body } = await owner.send("POST", "/account/totp", { password: PASSWORD });
    await owner.send("POST", "/account/totp/confirm", {
      code: await generate({ secret: body.secret, epoch: Math.floor(server.clock().getTime() / 1000) }),
    });
    const guesser = await signedOut(server, "198.51.100.77");
    for (let i = 0; i < 5; i++)
      await guesser.send("POST", "/session", { email: "sole@example.com", password: `no ${i}` });
    expect((await guesser.send("POST", "/session", { email: "sole@example.com", password: "no 6" })).status).toBe(429);
    const unlock = await server.call("POST", "/admin/v1/sign-in-throttles/clear", {
      key: ADMIN_TOKEN,
      body: { email: "Sole@Example.com" },
    });
    expect(unlock.body).toMatchObject({ email: "sole@example.com", brand_id: brandId, cleared: true });
    expect((await guesser.send("POST", "/session", { email: "sole@example.com", password: "no 7" })).status).toBe(401);

    const issued = await server.call("POST", "/admin/v1/password-resets", {
      key: ADMIN_TOKEN,
      body: { email: "sole@example.com", turn_off_two_factor: true },
    });
    expect(issued.status).toBe(201);
    const token = issued.body.url.split("#")[1];
    const visitor = await signedOut(server);
    expect((await visitor.send("POST", "/password-resets/inspect", { token })).body.turns_off_two_factor).toBe(true);
    const newPassword = "back in after losing everything";
    expect((await visitor.send("POST", "/password-resets/complete", { token, password: newPassword })).status).toBe(
      200,
    );
    const back = await signedOut(server);
    const signedIn = await back.send("POST", "/session", { email: "sole@example.com", password: newPassword });
    expect([signedIn.status, signedIn.body.member?.totp_enabled]).toEqual([200, false]);
    const log = (await auditActions(back)).filter((entry) => entry.actor === "operator").map((entry) => entry.action);
    expect(log).toEqual(expect.arrayContaining(["member.sign_in_throttle_cleared", "member.password_reset_issued"]));
  }, 90_000);

  it("lets an owner clear a member's sign-in throttle", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "unlocker@example.com");
    await member(server, brandId, "locked@example.com", "viewer");
    const guesser = await signedOut(server, "198.51.100.88");
    for (let i = 0; i < 5; i++)
      await guesser.send("POST", "/session", { email: "locked@example.com", password: `no ${i}` });
    expect((await guesser.send("POST", "/session", { email: "locked@example.com", password: PASSWORD })).status).toBe(
      429,
    );
    const id = await memberIdOf(owner, "locked@example.com");
    expect((await owner.send("POST", "/members/unlock", { member_id: id })).body).toEqual({
      member_id: id,
      cleared: true,
    });
    expect((await guesser.send("POST", "/session", { email: "locked@example.com", password: PASSWORD })).status).toBe(
      200,
    );
  }, 90_000);

  it("refuses passwords containing the email; answers an invitation to another brand's member like any other", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "inviting-owner@example.com");

    const token = await invite(server, brandId, "jane.doe@example.com");
    const invitee = await signedOut(server);
    for (const password of ["jane.doe@example.com is me", "my name is jane.doe, hello"]) {
      const refused = await invitee.send("POST", "/invitations/accept", { token, password });
      expect([refused.status, refused.body.error.code], password).toEqual([400, "weak_password"]);
    }

    const other = await server.brand();
    await member(server, other.id, "elsewhere@example.com");
    const toOther = await owner.send("POST", "/members/invitations", {
      email: "elsewhere@example.com",
      role: "viewer",
    });
    const fresh = await owner.send("POST", "/members/invitations", { email: "nobody-yet@example.com", role: "viewer" });
    expect(toOther.status).toBe(fresh.status);
    expect(Object.keys(toOther.body).sort()).toEqual(Object.keys(fresh.body).sort());
    const own = await owner.send("POST", "/members/invitations", {
      email: "inviting-owner@example.com",
      role: "owner",
      password: PASSWORD,
    });
    expect([own.status, own.body.error.code]).toEqual([409, "member_exists"]);
  });
  it("refuses every browser new to an account over its ceiling, from any number of addresses; the member's browser signs in", async () => {
    const { id: brandId } = await server.brand();
    const email = "ceiling@example.com";
    const owner = await member(server, brandId, email);
    // Over the ceiling: each of two addresses uses up its own allowance.
    expect(2 * PAIR_BACKOFF.free).toBe(ACCOUNT_BACKOFF.free);
    for (const address of ["198.18.1.1", "198.18.1.2"]) {
      const guesser = await signedOut(server, address);
      for (let i = 0; i < PAIR_BACKOFF.free; i++)
        expect((await guesser.send("POST", "/session", { email, password: `guess ${i}` })).status).toBe(401);
    }
    // Then 60 wrong passwords at once, each from an address of its own.
    const attackers = await Promise.all(Array.from({ length: 60 }, (_, i) => signedOut(server, `198.18.2.${i + 1}`)));
    const answers = await Promise.all(
      attackers.map((attacker, i) => attacker.send("POST", "/session", { email, password: `spread guess ${i}` })),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
    const checkedOfSixty = statuses.filter((status) => status === 401).length;
    const failed = (await auditActions(owner)).filter((entry) => entry.action === "session.sign_in_failed");
    expect({ checkedOfSixty, checked: failed.length }).toEqual({ checkedOfSixty: 0, checked: ACCOUNT_BACKOFF.free });
    expect(answers[0]!.body.error.message).toMatch(/browsers it was not signed in on before/);

    // The member's browser is known to the account: it signs in, from an address never seen.
    const signedIn = await owner.send(
      "POST",
      "/session",
      { email, password: PASSWORD },
      { "x-forwarded-for": "198.18.3.1" },
    );
    expect(signedIn.status).toBe(200);
    // It is throttled on its own: its allowance, then a wait of its own.
    for (let i = 0; i < PAIR_BACKOFF.free; i++)
      expect((await owner.send("POST", "/session", { email, password: `typo ${i}` })).status).toBe(401);
    const own = await owner.send("POST", "/session", { email, password: PASSWORD });
    expect([own.status, own.body.error.message]).toEqual([429, expect.stringMatching(/from this browser/)]);
    // A browser that knows the password but never signed in waits for the ceiling.
    const elsewhere = await signedOut(server, "198.18.3.2");
    expect((await elsewhere.send("POST", "/session", { email, password: PASSWORD })).status).toBe(429);
  }, 120_000);

  it("bounds the TOTP codes tried with the right password by the same ceiling; the member's browser signs in", async () => {
    const { id: brandId } = await server.brand();
    const email = "ceiling-totp@example.com";
    const owner = await member(server, brandId, email);
    const { body } = await owner.send("POST", "/account/totp", { password: PASSWORD });
    const codeAt = (offset: number) =>
      generate({ secret: body.secret, epoch: Math.floor(server.clock().getTime() / 1000) + offset * 30 });
    expect((await owner.send("POST", "/account/totp/confirm", { code: await codeAt(0) })).status).toBe(200);
    server.clock.advance(30_000); // the confirming code's step is used up
    const accepted = new Set(await Promise.all([-1, 0, 1].map(codeAt)));
    const wrong = Array.from({ length: 110 }, (_, i) => String(100_000 + i)).filter((code) => !accepted.has(code));
    // 100 codes at once, each from an address of its own, all with the right password.
    const attackers = await Promise.all(Array.from({ length: 100 }, (_, i) => signedOut(server, `198.18.4.${i + 1}`)));
    const answers = await Promise.all(
      attackers.map((attacker, i) =>
        attacker.send("POST", "/session", { email, password: PASSWORD, totp_code: wrong[i] }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
    const checked = statuses.filter((status) => status === 401).length;
    const failed = (await auditActions(owner)).filter((entry) => entry.action === "session.sign_in_failed");
    expect(failed.every((entry) => entry.detail.includes("wrong second factor"))).toBe(true);
    expect({ checked, audited: failed.length }).toEqual({
      checked: ACCOUNT_BACKOFF.free,
      audited: ACCOUNT_BACKOFF.free,
    });

    const signedIn = await owner.send("POST", "/session", { email, password: PASSWORD, totp_code: await codeAt(0) });
    expect(signedIn.status).toBe(200);
  }, 120_000);

  it("counts an IPv6 client by its /64: another address of the block meets the same wait, another block does not", async () => {
    const { id: brandId } = await server.brand();
    const email = "ipv6-block@example.com";
    const owner = await member(server, brandId, email);
    for (let i = 1; i <= PAIR_BACKOFF.free; i++) {
      const guesser = await signedOut(server, `2001:db8:1:2::${i}`);
      expect((await guesser.send("POST", "/session", { email, password: `guess ${i}` })).status).toBe(401);
    }
    const sameBlock = await signedOut(server, "2001:db8:1:2:ffff:ffff:ffff:fffe");
    const waits = await sameBlock.send("POST", "/session", { email, password: `guess ${PAIR_BACKOFF.free + 1}` });
    expect([waits.status, waits.body.error.message]).toEqual([429, expect.stringMatching(/from your address/)]);
    const otherBlock = await signedOut(server, "2001:db8:1:3::1");
    expect((await otherBlock.send("POST", "/session", { email, password: "another guess" })).status).toBe(401);
    // The audit log keeps each full address.
    const actors = (await auditActions(owner))
      .filter((entry) => entry.action === "session.sign_in_failed")
      .map((entry) => entry.actor);
    expect(actors).toEqual(expect.arrayContaining(["client 2001:db8:1:2::1", "client 2001:db8:1:3::1"]));
  }, 90_000);

  it("gives each browser that signs in a device cookie, of which only a hash is kept; one token across members", async () => {
    const { id: brandId } = await server.brand();
    const first = await member(server, brandId, "device-one@example.com");
    const token = first.cookies.get("lsh_device")!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await server.db.query<{ member_id: string; token_hash: string }>(
      "SELECT member_id, token_hash FROM member_devices WHERE member_id = $1",
      [await memberIdOf(first, "device-one@example.com")],
    );
    expect(rows.map((row) => row.token_hash)).toEqual([sha256Hex(token)]);
    expect(JSON.stringify(await server.db.query("SELECT * FROM member_devices"))).not.toContain(token);

    // The same browser signs in as another member: it keeps its token, known to both.
    await invite(server, brandId, "device-two@example.com").then((invitation) =>
      first.send("POST", "/invitations/accept", { token: invitation, password: PASSWORD }),
    );
    const again = await first.send("POST", "/session", { email: "device-two@example.com", password: PASSWORD });
    expect(again.status).toBe(200);
    const line = setCookieLine(again, "lsh_device")!;
    expect(line).toMatch(new RegExp(`^lsh_device=${token}; Max-Age=${DEVICE_KEPT_MS / 1000}; Path=/dashboard; `));
    expect(line).toMatch(/; HttpOnly/);
    const hashes = await server.db.query<{ token_hash: string }>(
      "SELECT d.token_hash FROM member_devices d JOIN members m ON m.id = d.member_id WHERE m.email LIKE 'device-%'",
    );
    expect(hashes.map((row) => row.token_hash)).toEqual([sha256Hex(token), sha256Hex(token)]);

    // Over https, a __Host- cookie.
    const https = browser(server, {
      origin: `https://${new URL(server.baseUrl).host}`,
      headers: { "x-forwarded-proto": "https" },
    });
    await https.send("GET", "/session");
    const accepted = await https.send("POST", "/invitations/accept", {
      token: await invite(server, brandId, "device-https@example.com"),
      password: PASSWORD,
    });
    const hostLine = setCookieLine(accepted, "__Host-lsh_device");
    expect(hostLine).toMatch(/; Path=\/; /);
    expect(hostLine).toMatch(/; HttpOnly; Secure; SameSite=Lax$/);

    // A member keeps their DEVICES_PER_MEMBER most recently used browsers.
    const id = await memberIdOf(first, "device-one@example.com");
    const start = server.clock().getTime();
    for (let i = 1; i <= DEVICES_PER_MEMBER; i++) await rememberDevice(server.db, id, undefined, new Date(start + i));
    const kept = await server.db.query<{ token_hash: string }>(
      "SELECT token_hash FROM member_devices WHERE member_id = $1",
      [id],
    );
    expect(kept).toHaveLength(DEVICES_PER_MEMBER);
    expect(kept.map((row) => row.token_hash)).not.toContain(sha256Hex(token));
  }, 90_000);

  // Last: they move the server's clock a day, then a year on.
  it("forgets the throttle of made-up emails a day after their last attempt; a fresh one stays", async () => {
    const sprayer = await signedOut(server, "192.0.2.77");
    const emails = Array.from({ length: 20 }, (_, i) => `made-up-${i}@example.com`);
    for (const email of emails)
      expect((await sprayer.send("POST", "/session", { email, password: "a wrong passphrase" })).status).toBe(401);
    const subjects = async () =>
      (
        await server.db.query<{ subject: string }>(
          "SELECT subject FROM sign_in_throttle WHERE subject LIKE '%made-up-%' OR subject LIKE '%fresh-one%'",
        )
      ).map((row) => row.subject);
    expect((await subjects()).length).toBe(emails.length * 2); // a pair and an account row each
    server.clock.advance(24 * 60 * 60 * 1000 + 1000);
    const later = await signedOut(server, "192.0.2.78");
    expect((await later.send("POST", "/session", { email: "fresh-one@example.com", password: "wrong" })).status).toBe(
      401,
    );
    await server.sweep();
    expect((await subjects()).sort()).toEqual([
      "account:email:fresh-one@example.com",
      "pair:email:fresh-one@example.com 192.0.2.78",
    ]);
  });

  it("forgets a browser a year after its last sign-in", async () => {
    const count = async () =>
      Number((await server.db.query<{ n: string }>("SELECT count(*) AS n FROM member_devices"))[0]!.n);
    expect(await count()).toBeGreaterThan(0);
    server.clock.advance(DEVICE_KEPT_MS / 2);
    await server.sweep();
    expect(await count()).toBeGreaterThan(0);
    server.clock.advance(DEVICE_KEPT_MS / 2 + 1000);
    await server.sweep();
    expect(await count()).toBe(0);
  });
});
