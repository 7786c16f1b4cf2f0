// A member's own sessions over the dashboard's API, on both engines: listed with their device,
// address and times, this one marked; each revocable, this one too (a sign-out); nobody else's.
import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browser, invite, member, PASSWORD } from "../../testkit/dashboard-browser.ts";
import { availableEngines, manualClock, startTestServer, type TestServer } from "../../testkit/harness.ts";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0";

type Browser = ReturnType<typeof browser>;

interface Listed {
  session_id: string;
  device: string;
  user_agent: string | null;
  address: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  current: boolean;
}

describe.each(availableEngines())("a member's sessions on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ engine, clock: manualClock() });
  });
  afterAll(() => server.close());

  /** A member who joined on an iPhone, and signed in again on Windows: both browsers. */
  async function twoSessions(role = "owner") {
    const brand = await server.brand();
    const email = `${role}-${randomUUID()}@example.com`;
    const token = await invite(server, brand.id, email, role);
    const phone = browser(server, { headers: { "user-agent": IPHONE } });
    await phone.send("GET", "/session");
    expect((await phone.send("POST", "/invitations/accept", { token, password: PASSWORD })).status).toBe(201);
    const desk = browser(server, { headers: { "user-agent": WINDOWS } });
    await desk.send("GET", "/session");
    expect((await desk.send("POST", "/session", { email, password: PASSWORD })).status).toBe(200);
    return { brand, email, phone, desk };
  }

  const listOf = async (who: Browser) => {
    const answer = await who.send("GET", "/account/sessions");
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body as { sessions: Listed[]; total: number };
  };

  it("lists the member's live sessions with device, address and times, this one marked", async () => {
    const { phone, desk } = await twoSessions();
    server.clock.advance(90_000);
    // The phone is used again (a minute on: its last use is written), the desk is not.
    const { sessions, total } = await listOf(phone);
    expect(total).toBe(2);
    expect(sessions.map((one) => [one.device, one.current])).toEqual([
      ["Safari 17 on iPhone", true],
      ["Firefox 128 on Windows", false],
    ]);
    const [mine, other] = sessions as [Listed, Listed];
    expect(mine).toMatchObject({ user_agent: IPHONE, address: "127.0.0.1" });
    expect(Date.parse(mine.last_seen_at)).toBe(server.clock().getTime());
    expect(Date.parse(other.last_seen_at)).toBe(server.clock().getTime() - 90_000);
    expect(Date.parse(other.expires_at)).toBe(Date.parse(other.last_seen_at) + 12 * 60 * 60_000);
    // Seen from the other side, the marks swap; the list never holds a cookie or its hash.
    const fromDesk = await listOf(desk);
    expect(fromDesk.sessions.find((one) => one.current)?.device).toBe("Firefox 128 on Windows");
    const cookie = desk.session()!;
    const text = JSON.stringify(fromDesk);
    expect(text).not.toContain(cookie);
    expect(text).not.toContain(createHash("sha256").update(cookie).digest("hex"));
  });

  it("revokes another session: its next request is 401, and the audit log names its device", async () => {
    const { phone, desk } = await twoSessions();
    const other = (await listOf(phone)).sessions.find((one) => !one.current)!;
    const revoked = await phone.send("DELETE", `/account/sessions/${other.session_id}`);
    expect([revoked.status, revoked.body]).toEqual([
      200,
      { session_id: other.session_id, revoked: true, current: false },
    ]);
    expect(revoked.headers.getSetCookie()).toEqual([]);
    expect((await desk.send("GET", "/account/sessions")).status).toBe(401);
    expect((await desk.send("GET", "/session")).body.signed_in).toBe(false);
    expect((await listOf(phone)).sessions.map((one) => one.device)).toEqual(["Safari 17 on iPhone"]);
    const entry = (await phone.send("GET", "/audit-log?action=session.revoked")).body.entries[0];
    expect(entry).toMatchObject({
      target_id: other.session_id,
      target_name: "Firefox 128 on Windows",
      address: "127.0.0.1",
    });
    expect(entry.detail).toMatch(/^Ended a session of Firefox 128 on Windows, last seen from 127\.0\.0\.1, signed in /);
    // Gone: a second revocation finds nothing.
    const again = await phone.send("DELETE", `/account/sessions/${other.session_id}`);
    expect([again.status, again.body.error.code]).toEqual([404, "not_found"]);
  });

  it("revoking this session signs out and clears its cookie", async () => {
    const { phone, desk } = await twoSessions("viewer");
    const mine = (await listOf(phone)).sessions.find((one) => one.current)!;
    const revoked = await phone.send("DELETE", `/account/sessions/${mine.session_id}`);
    expect([revoked.status, revoked.body.current]).toEqual([200, true]);
    expect(revoked.headers.getSetCookie().some((line) => /^lsh_session=;/.test(line))).toBe(true);
    expect((await phone.send("GET", "/session")).body.signed_in).toBe(false);
    expect((await listOf(desk)).total).toBe(1);
  });

  it("answers 404 for an id that names none of the member's live sessions", async () => {
    const { phone } = await twoSessions();
    const stranger = await twoSessions();
    const theirs = (await listOf(stranger.phone)).sessions[0]!.session_id;
    for (const id of [theirs, randomUUID(), "not-a-session", `${randomUUID()}0`, "x".repeat(200), "%ZZ"]) {
      const answer = await phone.send("DELETE", `/account/sessions/${id}`);
      expect([answer.status, answer.body.error?.code], id).toEqual([404, "not_found"]);
    }
    expect((await listOf(stranger.phone)).total).toBe(2);
  });

  it("needs the CSRF token and a session to revoke, a session to list", async () => {
    const { phone } = await twoSessions();
    const other = (await listOf(phone)).sessions.find((one) => !one.current)!;
    const bare = await phone.send("DELETE", `/account/sessions/${other.session_id}`, undefined, { "x-csrf-token": "" });
    expect([bare.status, bare.body.error.code]).toEqual([403, "csrf_failed"]);
    const nobody = browser(server);
    expect((await nobody.send("GET", "/account/sessions")).status).toBe(401);
    expect((await listOf(phone)).total).toBe(2);
  });

  it("leaves out sessions idle past their time, and lists older ones without a device as unknown", async () => {
    const { phone, desk } = await twoSessions();
    // Sessions begun before devices were kept have none.
    server.clock.advance(90_000);
    const other = (await listOf(phone)).sessions.find((one) => !one.current)!;
    await server.db.query("UPDATE dashboard_sessions SET user_agent = NULL WHERE public_id = $1", [other.session_id]);
    expect((await listOf(phone)).sessions.map((one) => one.device)).toEqual(["Safari 17 on iPhone", "Unknown device"]);
    // 11 hours on the phone is used; 2 more and the desk has been idle 13 hours (more than 12).
    server.clock.advance(11 * 60 * 60_000);
    await listOf(phone);
    server.clock.advance(2 * 60 * 60_000);
    expect((await listOf(phone)).sessions.map((one) => one.device)).toEqual(["Safari 17 on iPhone"]);
    expect((await desk.send("GET", "/session")).body.signed_in).toBe(false);
  });

  it("lists a member's own sessions only", async () => {
    const { brand, phone } = await twoSessions();
    const colleague = await member(server, brand.id, `colleague-${randomUUID()}@example.com`);
    expect((await listOf(colleague)).total).toBe(1);
    expect((await listOf(phone)).total).toBe(2);
  });
});
