// What a stolen dashboard session cannot do, and the links and sessions that die when they should,
// over HTTP on both engines: no credential change (a reset link for oneself, two-factor) without
// the password; reset links that die with their issuer's right and the member's own recovery;
// sessions that never outlive a password reset; a member's identity that is per brand, so
// accepting an invitation never depends on another brand.
import { generate } from "otplib";
import { ACCOUNT_BACKOFF } from "../services/members/sign-in-throttle.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, browser, member, memberIdOf, PASSWORD, signedOut } from "../../testkit/dashboard-browser.ts";
import { ADMIN_TOKEN, availableEngines, startTestServer, type TestServer } from "../../testkit/harness.ts";

/** The browser's own member id, as its session names it. */
async function selfId(client: Browser): Promise<string> {
  return (await client.send("GET", "/session")).body.member.member_id;
}

/** A browser that holds only what a thief copied: the session cookie and the CSRF token. */
async function stolen(server: TestServer, victim: Browser): Promise<Browser> {
  const csrf = (await victim.send("GET", "/session")).body.csrf_token;
  const thief = browser(server, { headers: { "x-forwarded-for": "203.0.113.66" } });
  for (const [name, value] of victim.cookies) if (name.endsWith("session")) thief.cookies.set(name, value);
  thief.setCsrf(csrf);
  return thief;
}

const tokenOf = (answer: { body: { url: string } }) => answer.body.url.split("#")[1]!;

/** Turns two-factor on for the signed-in member; the secret, for codes later. */
async function turnOnTwoFactor(server: TestServer, client: Browser): Promise<string> {
  const { body } = await client.send("POST", "/account/totp", { password: PASSWORD });
  const confirmed = await client.send("POST", "/account/totp/confirm", {
    code: await generate({ secret: body.secret, epoch: Math.floor(server.clock().getTime() / 1000) }),
  });
  expect(confirmed.status).toBe(200);
  return body.secret;
}

/** The member's sessions neither revoked nor expired, as stored. */
async function liveSessionCount(server: TestServer, email: string): Promise<number> {
  const rows = await server.db.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM dashboard_sessions s JOIN members m ON m.id = s.member_id
     WHERE m.email = $1 AND m.removed_at IS NULL AND s.revoked_at IS NULL AND s.expires_at > $2`,
    [email, server.clock()],
  );
  return Number(rows[0]!.n);
}

describe.each(availableEngines())("account takeover on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    // Behind a proxy, so that each client can come from its own address.
    server = await startTestServer({ engine, config: { trustProxy: ["loopback"] } });
  }, 120_000);
  afterAll(() => server.close());

  it("a stolen owner session issues no reset link: not for the owner, not without the owner's password", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "stolen-owner@example.com");
    await member(server, brandId, "co-owner@example.com");
    await turnOnTwoFactor(server, owner);
    const thief = await stolen(server, owner);
    expect((await thief.send("GET", "/members")).status).toBe(200);

    const ownId = await selfId(owner);
    const forSelf = await thief.send("POST", "/members/password-resets", {
      member_id: ownId,
      turn_off_two_factor: true,
      password: "a guess at the owner's password",
    });
    expect([forSelf.status, forSelf.body.error.code]).toEqual([403, "forbidden"]);
    // Even with the password, a link for oneself is refused: the Security page changes one's own.
    const withPassword = await owner.send("POST", "/members/password-resets", {
      member_id: ownId,
      password: PASSWORD,
      totp_code: "000000",
    });
    expect([withPassword.status, withPassword.body.error.code]).toEqual([403, "forbidden"]);

    const coOwner = await memberIdOf(owner, "co-owner@example.com");
    const bare = await thief.send("POST", "/members/password-resets", {
      member_id: coOwner,
      turn_off_two_factor: true,
    });
    expect([bare.status, bare.body.error.code]).toEqual([400, "missing_fields"]);
    const guessed = await thief.send("POST", "/members/password-resets", {
      member_id: coOwner,
      password: "a guess at the owner's password",
    });
    expect([guessed.status, guessed.body.error.code]).toEqual([401, "invalid_credentials"]);
    // The right password is not enough with the owner's two-factor on.
    const noCode = await thief.send("POST", "/members/password-resets", { member_id: coOwner, password: PASSWORD });
    expect([noCode.status, noCode.body.error.code]).toEqual([401, "totp_required"]);
    const stored = await server.db.query(
      "SELECT 1 FROM password_resets r JOIN members m ON m.id = r.member_id WHERE m.brand_id = $1",
      [brandId],
    );
    expect(stored).toHaveLength(0);
  }, 90_000);

  it("a stolen session cannot enrol its own authenticator: two-factor set-up needs the password", async () => {
    const { id: brandId } = await server.brand();
    const victim = await member(server, brandId, "enrol-victim@example.com", "viewer");
    const thief = await stolen(server, victim);
    const bare = await thief.send("POST", "/account/totp");
    expect([bare.status, bare.body.error.code]).toEqual([400, "missing_fields"]);
    const guessed = await thief.send("POST", "/account/totp", { password: "a guess at the password" });
    expect([guessed.status, guessed.body.error.code]).toEqual([401, "invalid_credentials"]);
    const pending = await server.db.query("SELECT 1 FROM members WHERE email = $1 AND totp_pending IS NOT NULL", [
      "enrol-victim@example.com",
    ]);
    expect(pending).toHaveLength(0);
    const started = await victim.send("POST", "/account/totp", { password: PASSWORD });
    expect(started.status).toBe(200);
    expect(started.body.secret).toMatch(/^[A-Z2-7]+=*$/);
  }, 90_000);

  it("a reset link dies when its issuer is removed or demoted", async () => {
    const { id: brandId } = await server.brand();
    const issuer = await member(server, brandId, "issuer@example.com");
    const target = await member(server, brandId, "target-owner@example.com");
    const targetId = await memberIdOf(issuer, "target-owner@example.com");
    const issuerId = await selfId(issuer);
    const visitor = await signedOut(server);

    const first = await issuer.send("POST", "/members/password-resets", { member_id: targetId, password: PASSWORD });
    expect(first.status).toBe(201);
    expect((await visitor.send("POST", "/password-resets/inspect", { token: tokenOf(first) })).status).toBe(200);
    // The target demotes the issuer: the link is dead.
    expect((await target.send("PATCH", `/members/${issuerId}`, { role: "developer" })).status).toBe(200);
    expect((await visitor.send("POST", "/password-resets/inspect", { token: tokenOf(first) })).status).toBe(404);
    const completed = await visitor.send("POST", "/password-resets/complete", {
      token: tokenOf(first),
      password: "a takeover passphrase",
    });
    expect(completed.status).toBe(404);

    // Made an owner again (which takes the acting owner's password), the issuer's old link stays
    // dead: demoting used it up. A new link, then the issuer removed: dead too.
    expect((await target.send("PATCH", `/members/${issuerId}`, { role: "owner", password: PASSWORD })).status).toBe(
      200,
    );
    expect((await visitor.send("POST", "/password-resets/inspect", { token: tokenOf(first) })).status).toBe(404);
    const second = await issuer.send("POST", "/members/password-resets", { member_id: targetId, password: PASSWORD });
    expect(second.status).toBe(201);
    expect((await target.send("DELETE", `/members/${issuerId}`)).status).toBe(200);
    expect((await visitor.send("POST", "/password-resets/inspect", { token: tokenOf(second) })).status).toBe(404);
    expect(
      (
        await visitor.send("POST", "/password-resets/complete", {
          token: tokenOf(second),
          password: "a takeover passphrase",
        })
      ).status,
    ).toBe(404);
    // The target's password is still their own.
    const client = await signedOut(server);
    expect(
      (await client.send("POST", "/session", { email: "target-owner@example.com", password: PASSWORD })).status,
    ).toBe(200);
  }, 90_000);

  it("a reset link dies when the member changes the password or signs out everywhere", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "links-owner@example.com");
    const target = await member(server, brandId, "links-target@example.com", "developer");
    const targetId = await memberIdOf(owner, "links-target@example.com");
    const visitor = await signedOut(server);
    const issue = async () =>
      tokenOf(await owner.send("POST", "/members/password-resets", { member_id: targetId, password: PASSWORD }));
    const operatorIssue = async () =>
      tokenOf(
        await server.call("POST", "/admin/v1/password-resets", {
          key: ADMIN_TOKEN,
          body: { email: "links-target@example.com" },
        }),
      );

    const beforeChange = [await issue(), await operatorIssue()];
    const newPassword = "the target's own new passphrase";
    const changed = await target.send("PUT", "/account/password", {
      current_password: PASSWORD,
      new_password: newPassword,
    });
    expect(changed.status).toBe(200);
    for (const token of beforeChange)
      expect((await visitor.send("POST", "/password-resets/inspect", { token })).status).toBe(404);

    const beforeSignOut = [await issue(), await operatorIssue()];
    expect((await target.send("POST", "/sessions/revoke-all")).status).toBe(200);
    for (const token of beforeSignOut) {
      expect((await visitor.send("POST", "/password-resets/inspect", { token })).status).toBe(404);
      expect(
        (await visitor.send("POST", "/password-resets/complete", { token, password: "a takeover passphrase" })).status,
      ).toBe(404);
    }
    const client = await signedOut(server);
    expect(
      (await client.send("POST", "/session", { email: "links-target@example.com", password: newPassword })).status,
    ).toBe(200);
  }, 90_000);

  it("no session outlives a password reset, however the sign-ins that checked the old one are timed", async () => {
    const { id: brandId } = await server.brand();
    await member(server, brandId, "raced@example.com", "developer");
    for (let round = 0; round < 3; round++) {
      const issued = await server.call("POST", "/admin/v1/password-resets", {
        key: ADMIN_TOKEN,
        body: { email: "raced@example.com" },
      });
      const token = tokenOf(issued);
      // Sign-ins with the current password from their own addresses, and the reset, all at once.
      const password = round === 0 ? PASSWORD : `the reset passphrase of round ${round - 1}`;
      const clients = await Promise.all(
        Array.from({ length: 8 }, (_, i) => signedOut(server, `198.51.100.${round * 10 + i + 1}`)),
      );
      const visitor = await signedOut(server);
      const [reset, ...signIns] = await Promise.all([
        visitor.send("POST", "/password-resets/complete", {
          token,
          password: `the reset passphrase of round ${round}`,
        }),
        ...clients.map((client) => client.send("POST", "/session", { email: "raced@example.com", password })),
      ]);
      expect(reset.status).toBe(200);
      expect(signIns.map((answer) => answer.status).filter((status) => ![200, 401, 429].includes(status))).toEqual([]);
      expect(await liveSessionCount(server, "raced@example.com")).toBe(0);
      // Whatever session a sign-in was given is refused now.
      for (const [i, answer] of signIns.entries())
        if (answer.status === 200) expect((await clients[i]!.send("GET", "/members")).status).toBe(401);
    }
  }, 120_000);

  it("an email is an identity per brand: accepting never depends on another brand, nobody squats an address", async () => {
    const victimBrand = await server.brand();
    const hostileBrand = await server.brand();
    const hostile = await member(server, hostileBrand.id, "hostile-owner@example.com");
    const victimOwner = await member(server, victimBrand.id, "victim-owner@example.com");

    // The hostile owner invites the victim's address (already a member elsewhere) and a fresh
    // one, and accepts both links: the answers are alike, so nothing is learnt of the other brand.
    const taken = await hostile.send("POST", "/members/invitations", {
      email: "victim-owner@example.com",
      role: "viewer",
    });
    const fresh = await hostile.send("POST", "/members/invitations", {
      email: "nobody-yet@example.com",
      role: "viewer",
    });
    const squatter = await signedOut(server);
    const acceptTaken = await squatter.send("POST", "/invitations/accept", {
      token: tokenOf(taken),
      password: "the squatter's passphrase",
    });
    const acceptFresh = await (await signedOut(server)).send("POST", "/invitations/accept", {
      token: tokenOf(fresh),
      password: "the squatter's passphrase",
    });
    expect([acceptTaken.status, acceptFresh.status]).toEqual([201, 201]);
    expect(Object.keys(acceptTaken.body).sort()).toEqual(Object.keys(acceptFresh.body).sort());

    // A squatted address does not keep its owner out of their own brand.
    const squattedFirst = await hostile.send("POST", "/members/invitations", {
      email: "late-joiner@example.com",
      role: "viewer",
    });
    await (await signedOut(server)).send("POST", "/invitations/accept", {
      token: tokenOf(squattedFirst),
      password: "the squatter's passphrase",
    });
    const realInvite = await victimOwner.send("POST", "/members/invitations", {
      email: "late-joiner@example.com",
      role: "developer",
    });
    const joined = await (await signedOut(server)).send("POST", "/invitations/accept", {
      token: tokenOf(realInvite),
      password: "the real member's passphrase",
    });
    expect([joined.status, joined.body.brand?.brand_id]).toEqual([201, victimBrand.id]);

    // Each password signs in to its own brand.
    const real = await (await signedOut(server)).send("POST", "/session", {
      email: "late-joiner@example.com",
      password: "the real member's passphrase",
    });
    expect([real.status, real.body.brand?.brand_id, real.body.member?.role]).toEqual([
      200,
      victimBrand.id,
      "developer",
    ]);
    const squat = await (await signedOut(server)).send("POST", "/session", {
      email: "late-joiner@example.com",
      password: "the squatter's passphrase",
    });
    expect([squat.status, squat.body.brand?.brand_id]).toEqual([200, hostileBrand.id]);

    // The operator's reset by email names the brand when the email has several.
    const ambiguous = await server.call("POST", "/admin/v1/password-resets", {
      key: ADMIN_TOKEN,
      body: { email: "late-joiner@example.com" },
    });
    expect([ambiguous.status, ambiguous.body.error.code]).toEqual([400, "invalid_fields"]);
    const named = await server.call("POST", "/admin/v1/password-resets", {
      key: ADMIN_TOKEN,
      body: { email: "late-joiner@example.com", brand_id: victimBrand.id },
    });
    expect([named.status, named.body.brand_id]).toEqual([201, victimBrand.id]);
  }, 120_000);

  it("one password for two brands: sign-in asks which, and signs in to the one named", async () => {
    const first = await server.brand({ name: "First Brand" });
    const second = await server.brand({ name: "Second Brand" });
    await member(server, first.id, "both@example.com", "viewer");
    await member(server, second.id, "both@example.com", "developer");
    const client = await signedOut(server);
    const asked = await client.send("POST", "/session", { email: "both@example.com", password: PASSWORD });
    expect([asked.status, asked.body.error.code]).toEqual([401, "brand_required"]);
    expect(asked.body.error.message).toContain(`First Brand (brand_id ${first.id})`);
    expect(asked.body.error.message).toContain(`Second Brand (brand_id ${second.id})`);
    const chosen = await client.send("POST", "/session", {
      email: "both@example.com",
      password: PASSWORD,
      brand_id: second.id,
    });
    expect([chosen.status, chosen.body.brand?.brand_id, chosen.body.member?.role]).toEqual([
      200,
      second.id,
      "developer",
    ]);
    // A wrong password says nothing of how many brands the email belongs to.
    const wrong = await client.send("POST", "/session", { email: "both@example.com", password: "not the passphrase" });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, "invalid_credentials"]);
  }, 90_000);

  it("an invitation's role: required in the dashboard, the operator's default is owner as the contract states", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "role-owner@example.com");
    const roleless = await owner.send("POST", "/members/invitations", { email: "roleless@example.com" });
    expect([roleless.status, roleless.body.error.code]).toEqual([400, "missing_fields"]);
    const byOperator = await server.call("POST", "/admin/v1/invitations", {
      key: ADMIN_TOKEN,
      body: { brand_id: brandId, email: "first-member@example.com" },
    });
    expect([byOperator.status, byOperator.body.role]).toEqual([201, "owner"]);
  }, 90_000);

  it("a stolen owner session makes no owner: inviting or promoting one takes the owner's password", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, "grant-owner@example.com");
    await member(server, brandId, "grant-dev@example.com", "developer");
    const thief = await stolen(server, owner);
    const invited = await thief.send("POST", "/members/invitations", { email: "mallory@evil.test", role: "owner" });
    expect([invited.status, invited.body.error.code]).toEqual([401, "invalid_credentials"]);
    const guessed = await thief.send("POST", "/members/invitations", {
      email: "mallory@evil.test",
      role: "owner",
      password: "a guess at the owner's password",
    });
    expect([guessed.status, guessed.body.error.code]).toEqual([401, "invalid_credentials"]);
    const devId = await memberIdOf(owner, "grant-dev@example.com");
    const promoted = await thief.send("PATCH", `/members/${devId}`, { role: "owner" });
    expect([promoted.status, promoted.body.error.code]).toEqual([401, "invalid_credentials"]);
    expect((await owner.send("GET", "/members")).body.members.map((one: { role: string }) => one.role).sort()).toEqual([
      "developer",
      "owner",
    ]);
    // Other roles need no proof; the owner with the password makes an owner.
    expect(
      (await thief.send("POST", "/members/invitations", { email: "viewer@example.com", role: "viewer" })).status,
    ).toBe(201);
    expect((await owner.send("PATCH", `/members/${devId}`, { role: "owner", password: PASSWORD })).status).toBe(200);
  }, 90_000);

  it("a reset link dies when its issuer changes their own password or signs out everywhere", async () => {
    const { id: brandId } = await server.brand();
    const issuer = await member(server, brandId, "own-recovery@example.com");
    await member(server, brandId, "own-recovery-target@example.com", "developer");
    const targetId = await memberIdOf(issuer, "own-recovery-target@example.com");
    const visitor = await signedOut(server);
    const issue = async (password: string) =>
      tokenOf(await issuer.send("POST", "/members/password-resets", { member_id: targetId, password }));
    const beforeChange = await issue(PASSWORD);
    const newPassword = "the issuer's own new passphrase";
    expect(
      (await issuer.send("PUT", "/account/password", { current_password: PASSWORD, new_password: newPassword })).status,
    ).toBe(200);
    expect((await visitor.send("POST", "/password-resets/inspect", { token: beforeChange })).status).toBe(404);
    const beforeSignOut = await issue(newPassword);
    expect((await issuer.send("POST", "/sessions/revoke-all")).status).toBe(200);
    expect((await visitor.send("POST", "/password-resets/inspect", { token: beforeSignOut })).status).toBe(404);
  }, 90_000);

  it("a member of another brand with the victim's email neither lifts nor bypasses the victim's ceiling", async () => {
    const victimBrand = await server.brand();
    const hostileBrand = await server.brand();
    const victimOwner = await member(server, victimBrand.id, "ceiling-victim@example.com");
    const hostile = await member(server, hostileBrand.id, "ceiling-hostile@example.com");
    // The hostile owner makes a member of their own brand with the victim's email, and knows its password.
    const squat = await hostile.send("POST", "/members/invitations", {
      email: "ceiling-victim@example.com",
      role: "viewer",
    });
    const fake = await signedOut(server, "198.51.100.200");
    expect(
      (await fake.send("POST", "/invitations/accept", { token: tokenOf(squat), password: "the hostile's passphrase" }))
        .status,
    ).toBe(201);
    const fakeId = await memberIdOf(hostile, "ceiling-victim@example.com");
    // Guesses at the victim's password from new browsers at many addresses, each also the fake's.
    const answers: number[] = [];
    for (let i = 0; i < 30; i++) {
      const guesser = await signedOut(server, `203.0.113.${100 + i}`);
      answers.push(
        (await guesser.send("POST", "/session", { email: "ceiling-victim@example.com", password: `guess ${i}` }))
          .status,
      );
      // Unlocking the fake member lifts nothing of the victim's.
      if (i === 15) expect((await hostile.send("POST", "/members/unlock", { member_id: fakeId })).status).toBe(200);
    }
    const victimId = await memberIdOf(victimOwner, "ceiling-victim@example.com");
    const victimChecks = await server.db.query<{ failures: number }>(
      "SELECT failures FROM sign_in_throttle WHERE subject = $1",
      [`account:${victimId}`],
    );
    // The victim's ceiling counted every guess checked against it, and stopped them at its bound.
    expect(Number(victimChecks[0]!.failures)).toBeLessThanOrEqual(ACCOUNT_BACKOFF.free + 1);
    expect(answers.filter((status) => status === 429).length).toBeGreaterThan(0);
    // Over the victim's ceiling, the fake's password, from the browser the fake signed in on, signs
    // in as the fake alone: the victim's password is no longer checked, so nothing is learnt of it.
    const asFake = await fake.send("POST", "/session", {
      email: "ceiling-victim@example.com",
      password: "the hostile's passphrase",
    });
    expect([asFake.status, asFake.body.brand?.brand_id]).toEqual([200, hostileBrand.id]);
    // No entry about the victim's sign-ins reaches the hostile brand's audit log.
    const hostileLog = (await hostile.send("GET", "/audit-log?limit=100")).body.entries as Array<{ action: string }>;
    expect(hostileLog.filter((entry) => entry.action === "session.sign_in_failed")).toEqual([]);
    // The victim, from their own browser, still signs in.
    expect(
      (await victimOwner.send("POST", "/session", { email: "ceiling-victim@example.com", password: PASSWORD })).status,
    ).toBe(200);
  }, 120_000);
});
