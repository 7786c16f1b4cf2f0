// Sessions, invitations and password-reset links end (signed out, revoked, used, expired), and a
// day later the lifecycle sweeper deletes them, so neither a member signing in daily nor an owner
// inviting and revoking in a loop grows a table for good. Live ones stay. On both engines.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { availableEngines, startTestServer, type TestServer } from "../../testkit/harness.ts";
import { browser, member, PASSWORD } from "../../testkit/dashboard-browser.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

describe.each(availableEngines())("ended account records on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ engine });
  }, 120_000);
  afterAll(() => server.close());

  async function rows(): Promise<Record<string, number>> {
    const count = async (sql: string) => Number((await server.db.query<{ n: string | number }>(sql))[0]!.n);
    return {
      sessions: await count("SELECT count(*) AS n FROM dashboard_sessions"),
      liveSessions: await count("SELECT count(*) AS n FROM dashboard_sessions WHERE revoked_at IS NULL"),
      invitations: await count("SELECT count(*) AS n FROM invitations"),
      openInvitations: await count(
        "SELECT count(*) AS n FROM invitations WHERE used_at IS NULL AND revoked_at IS NULL",
      ),
      resets: await count("SELECT count(*) AS n FROM password_resets"),
    };
  }

  it("are deleted by the sweeper a day after they ended; live ones stay", async () => {
    const { id: brandId } = await server.brand();
    // The owner's session (from the accepted invitation, which is now used) stays live.
    const owner = await member(server, brandId, "owner@example.com");
    await member(server, brandId, "developer@example.com", "developer");
    // A second sign-in of the owner, then its sign-out.
    const laptop = browser(server);
    await laptop.send("GET", "/session");
    expect((await laptop.send("POST", "/session", { email: "owner@example.com", password: PASSWORD })).status).toBe(
      200,
    );
    expect((await laptop.send("DELETE", "/session")).status).toBe(200);
    // An invitation revoked, another left open (72 h).
    const revoked = await owner.send("POST", "/members/invitations", { email: "revoked@example.com", role: "viewer" });
    expect(revoked.status).toBe(201);
    expect((await owner.send("DELETE", `/members/invitations/${revoked.body.invitation_id}`)).status).toBe(200);
    expect(
      (await owner.send("POST", "/members/invitations", { email: "open@example.com", role: "viewer" })).status,
    ).toBe(201);
    // A reset link never used (1 h).
    const developerId = (await owner.send("GET", "/members")).body.members.find(
      (one: { email: string }) => one.email === "developer@example.com",
    ).member_id;
    expect(
      (await owner.send("POST", "/members/password-resets", { member_id: developerId, password: PASSWORD })).status,
    ).toBe(201);

    const before = await rows();
    expect(before).toEqual({ sessions: 3, liveSessions: 2, invitations: 4, openInvitations: 1, resets: 1 });
    // Within the day after they ended, nothing is deleted.
    server.clock.advance(DAY_MS / 2);
    await server.sweep();
    expect(await rows()).toEqual(before);

    // A day after: the signed-out session, the used and revoked invitations and the expired link
    // are gone; the sessions still live and the open invitation stay.
    server.clock.advance(DAY_MS / 2 + 2 * 60 * 60 * 1000);
    await server.sweep();
    expect(await rows()).toEqual({ sessions: 2, liveSessions: 2, invitations: 1, openInvitations: 1, resets: 0 });
  });

  it("are looked for at most once every 10 minutes, not on every pass of the sweeper", async () => {
    const signedOut = async () =>
      Number(
        (
          await server.db.query<{ n: string | number }>(
            "SELECT count(*) AS n FROM dashboard_sessions WHERE revoked_at IS NOT NULL",
          )
        )[0]!.n,
      );
    const laptop = browser(server);
    await laptop.send("GET", "/session");
    expect((await laptop.send("POST", "/session", { email: "owner@example.com", password: PASSWORD })).status).toBe(
      200,
    );
    expect((await laptop.send("DELETE", "/session")).status).toBe(200);
    expect(await signedOut()).toBe(1);
    // A look 2 minutes before the session is a day ended: too soon to delete it.
    server.clock.advance(DAY_MS - 2 * 60_000);
    await server.sweep();
    // 5 minutes on it is due, but the next look is 10 minutes after the last.
    server.clock.advance(5 * 60_000);
    await server.sweep();
    expect(await signedOut()).toBe(1);
    server.clock.advance(6 * 60_000);
    await server.sweep();
    expect(await signedOut()).toBe(0);
  });
});
