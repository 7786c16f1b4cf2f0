// The dashboard's audit log over HTTP, on both engines: every entry names the client address of
// its request and what its target was called; owners filter it by action and by member; it and
// the delivery log give their totals on every page.
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../config.ts";
import { openDatabase } from "../store/database.ts";
import { splitStatements } from "../store/migrate.ts";
import { browser, invite, member } from "../../testkit/dashboard-browser.ts";
import {
  ADMIN_TOKEN,
  availableEngines,
  scratchPostgresDatabase,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";

interface Entry {
  entry_id: string;
  actor: string;
  member_id: string | null;
  address: string | null;
  action: string;
  target_id: string | null;
  target_name: string | null;
  detail: string;
}

describe.each(availableEngines())("the dashboard's audit log on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    const transport = { send: async () => ({ ok: true as const, status: 204, body: "" }) };
    server = await startTestServer({ engine, config: { webhookAllowHosts: ["127.0.0.1"] }, delivery: { transport } });
  });
  afterAll(() => server.close());

  /** A brand with an owner and a developer, and what each did: the owner's session and the ids. */
  async function brandWithHistory() {
    const brand = await server.brand();
    const owner = await member(server, brand.id, `owner-${brand.id}@example.com`);
    const dev = await member(server, brand.id, `dev-${brand.id}@example.com`, "developer");
    const ids = new Map<string, string>(
      (await owner.send("GET", "/members")).body.members.map((one: { email: string; member_id: string }) => [
        one.email.split("-")[0],
        one.member_id,
      ]),
    );
    const key = await dev.send("POST", "/modes/test/keys", { name: "ci key", scopes: ["streams:read"] });
    expect(key.status).toBe(201);
    expect((await dev.send("DELETE", `/modes/test/keys/${key.body.key_id}`)).status).toBe(200);
    const stream = await dev.send("POST", "/modes/test/streams", streamBody({ product_name: "Aurora earbuds" }));
    expect(stream.status).toBe(201);
    expect((await dev.send("DELETE", `/modes/test/streams/${stream.body.stream_id}`)).status).toBe(200);
    const invited = await owner.send("POST", "/members/invitations", { email: "later@example.com", role: "viewer" });
    expect((await owner.send("DELETE", `/members/invitations/${invited.body.invitation_id}`)).status).toBe(200);
    expect((await owner.send("PATCH", `/members/${ids.get("dev")}`, { role: "viewer" })).status).toBe(200);
    return { brand, owner, ids, keyId: key.body.key_id as string, streamId: stream.body.stream_id as string };
  }

  const entriesOf = async (owner: ReturnType<typeof browser>, query = "") => {
    const answer = await owner.send("GET", `/audit-log?limit=100${query}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body as { entries: Entry[]; total: number; limit: number; offset: number };
  };

  it("names the address of every change's request and what its target was called", async () => {
    const { owner, ids, keyId, streamId } = await brandWithHistory();
    const { entries } = await entriesOf(owner);
    for (const entry of entries) expect(entry.address, entry.action).toBe("127.0.0.1");
    // The operator's invitations of the two members come first (oldest); these are the members'.
    const named = (action: string) => {
      const entry = entries.find((one) => one.action === action && one.actor !== "operator")!;
      return { target: entry.target_id, name: entry.target_name, by: entry.member_id };
    };
    expect(named("key.created")).toEqual({ target: keyId, name: "ci key", by: ids.get("dev") });
    expect(named("key.revoked")).toEqual({ target: keyId, name: "ci key", by: ids.get("dev") });
    expect(named("stream.started")).toMatchObject({ target: streamId, name: "Aurora earbuds" });
    expect(named("stream.ended")).toMatchObject({ target: streamId, name: "Aurora earbuds" });
    expect(named("invitation.created").name).toBe("later@example.com");
    expect(named("invitation.revoked").name).toBe("later@example.com");
    expect(named("member.role_changed")).toMatchObject({ target: ids.get("dev"), by: ids.get("owner") });
    expect(named("member.role_changed").name).toMatch(/^dev-/);
    expect(entries.find((one) => one.action === "stream.ended")!.detail).toBe('Ended "Aurora earbuds".');
  });

  it("names the address of the operator's requests and of clients not signed in", async () => {
    const brand = await server.brand();
    const owner = await member(server, brand.id, `first-${brand.id}@example.com`);
    const stranger = browser(server);
    await stranger.send("GET", "/session");
    const email = `first-${brand.id}@example.com`;
    expect((await stranger.send("POST", "/session", { email, password: "not the password" })).status).toBe(401);
    const { entries } = await entriesOf(owner);
    const invited = entries.find((one) => one.action === "invitation.created")!;
    expect(invited).toMatchObject({ actor: "operator", member_id: null, address: "127.0.0.1", target_name: email });
    const failed = entries.find((one) => one.action === "session.sign_in_failed")!;
    expect(failed).toMatchObject({ actor: "client 127.0.0.1", member_id: null, address: "127.0.0.1" });
  });

  it("answers entries written before addresses and names were kept with null", async () => {
    const brand = await server.brand();
    const owner = await member(server, brand.id, `old-${brand.id}@example.com`);
    const id = randomUUID();
    await server.db.query(
      `INSERT INTO audit_log (id, brand_id, at, actor, action, detail) VALUES ($1, $2, $3, 'operator', 'key.created', 'Old.')`,
      [id, brand.id, new Date(server.clock().getTime() - 60_000)],
    );
    const old = (await entriesOf(owner)).entries.find((one) => one.entry_id === id);
    expect(old).toMatchObject({ address: null, target_name: null, target_id: null, member_id: null });
  });

  it("filters by action and by member, with the total of what matches", async () => {
    const { owner, ids } = await brandWithHistory();
    const all = await entriesOf(owner);
    expect(all.total).toBe(all.entries.length);
    const keys = await entriesOf(owner, "&action=key.created");
    expect(keys.entries.map((one) => one.action)).toEqual(["key.created"]);
    expect(keys.total).toBe(1);
    const byDev = await entriesOf(owner, `&member_id=${ids.get("dev")}`);
    expect(byDev.entries.length).toBeGreaterThanOrEqual(5);
    expect(new Set(byDev.entries.map((one) => one.member_id))).toEqual(new Set([ids.get("dev")]));
    expect(byDev.total).toBe(byDev.entries.length);
    const both = await entriesOf(owner, `&member_id=${ids.get("owner")}&action=key.created`);
    expect([both.entries, both.total]).toEqual([[], 0]);
    const nobody = await entriesOf(owner, `&member_id=${randomUUID()}`);
    expect([nobody.entries, nobody.total]).toEqual([[], 0]);
    // A page of the list keeps the total of the whole.
    const page = (await owner.send("GET", `/audit-log?limit=2&offset=1&member_id=${ids.get("dev")}`)).body;
    expect([page.entries.length, page.total, page.limit, page.offset]).toEqual([2, byDev.total, 2, 1]);
    expect(page.entries.map((one: Entry) => one.entry_id)).toEqual(
      byDev.entries.slice(1, 3).map((one) => one.entry_id),
    );
  });

  it("refuses a filter it does not know with 400 invalid_fields", async () => {
    const { owner } = await brandWithHistory();
    for (const query of [
      "action=key.made",
      "action=",
      `action=${"x".repeat(100)}`,
      "member_id=nobody",
      `member_id=${randomUUID()}x`,
      "member_id=",
    ]) {
      const answer = await owner.send("GET", `/audit-log?${query}`);
      expect([answer.status, answer.body.error?.code], query).toEqual([400, "invalid_fields"]);
      expect(typeof answer.body.error.message, query).toBe("string");
    }
    // Owners only, filters or not.
    const viewer = await member(server, (await server.brand()).id, `viewer-${randomUUID()}@example.com`, "viewer");
    expect((await viewer.send("GET", "/audit-log?action=key.created")).status).toBe(403);
  });

  it("gives the delivery log's total on every page", async () => {
    const brand = await server.brand();
    const owner = await member(server, brand.id, `hooks-${brand.id}@example.com`);
    const { key } = await server.key(brand.id);
    const hook = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: "http://127.0.0.1:9/hooks", events: ["stream.started"] },
    });
    for (let count = 0; count < 3; count++) {
      const started = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
      expect(started.status).toBe(201);
      expect((await server.call("DELETE", `/api/v1/streams/${started.body.stream_id}`, { key })).status).toBe(200);
    }
    const path = `/modes/test/webhooks/${hook.body.webhook_id}/deliveries`;
    // Before the worker expands the events, and after it has sent them.
    expect((await owner.send("GET", `${path}?limit=1`)).body).toMatchObject({ total: 3, limit: 1, offset: 0 });
    await server.deliver();
    const page = (await owner.send("GET", `${path}?limit=2&offset=2`)).body;
    expect([page.deliveries.length, page.total]).toEqual([1, 3]);
    expect((await owner.send("GET", `${path}?outcome=succeeded`)).body.total).toBe(3);
    expect((await owner.send("GET", `${path}?outcome=failed`)).body).toMatchObject({ deliveries: [], total: 0 });
  });

  it("keeps invitations the operator made through its API audited with its address", async () => {
    const brand = await server.brand();
    await invite(server, brand.id, `op-${brand.id}@example.com`);
    const owner = await member(server, brand.id, `owner2-${brand.id}@example.com`);
    const reset = await server.call("POST", "/admin/v1/password-resets", {
      key: ADMIN_TOKEN,
      body: { email: `owner2-${brand.id}@example.com` },
    });
    expect(reset.status).toBe(201);
    const issued = (await entriesOf(owner, "&action=member.password_reset_issued")).entries;
    expect(issued).toEqual([
      expect.objectContaining({
        actor: "operator",
        address: "127.0.0.1",
        target_name: `owner2-${brand.id}@example.com`,
      }),
    ]);
  });
});

describe.each(availableEngines())("migration 023 on an audit log written before it (%s)", (engine) => {
  it("names the targets of older entries where they can be found, and gives them no address", async () => {
    const scratch = engine === "postgres" ? await scratchPostgresDatabase(testDatabaseUrl()!) : null;
    const db = await openDatabase(scratch?.url ?? "memory:");
    try {
      const dir = new URL("../store/migrations/", import.meta.url);
      const files = readdirSync(dir)
        .filter((name) => name.endsWith(".sql"))
        .sort();
      const apply = async (name: string) => {
        for (const statement of splitStatements(readFileSync(new URL(name, dir), "utf8"))) await db.query(statement);
      };
      for (const name of files.filter((file) => file < "023")) await apply(name);
      const [brand, key, member, invitation, stream, webhook] = [1, 2, 3, 4, 5, 6].map(() => randomUUID()) as [
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      const now = new Date();
      await db.query(
        "INSERT INTO brands (id, name, vertical, plan, plan_minutes, created_at) VALUES ($1, 'b', 'live-commerce', 'growth', 0, $2)",
        [brand, now],
      );
      await db.query(
        `INSERT INTO api_keys (id, brand_id, name, environment, scopes, key_hash, created_at)
         VALUES ($1, $2, 'ci key', 'test', '{streams:read}', 'hash', $3)`,
        [key, brand, now],
      );
      await db.query(
        `INSERT INTO members (id, brand_id, email, role, password_hash, created_at) VALUES ($1, $2, 'ana@example.com', 'owner', 'x', $3)`,
        [member, brand, now],
      );
      await db.query(
        `INSERT INTO invitations (id, brand_id, email, role, token_hash, created_at, expires_at)
         VALUES ($1, $2, 'bo@example.com', 'viewer', 'token', $3, $3)`,
        [invitation, brand, now],
      );
      await db.query(
        `INSERT INTO streams (id, brand_id, mode, status, creator_id, product_name, platform, vertical, room_name, created_at)
         VALUES ($1, $2, 'test', 'live', 'avt_x', 'Aurora earbuds', 'youtube', 'live-commerce', 'room', $3)`,
        [stream, brand, now],
      );
      await db.query(
        `INSERT INTO webhooks (id, brand_id, mode, url, events, secret, created_at)
         VALUES ($1, $2, 'test', 'https://hooks.example.com/a', '{stream.ended}', 's', $3)`,
        [webhook, brand, now],
      );
      const entries: Array<[string, string | null]> = [
        ["key.created", key],
        ["key.revoked", key],
        ["member.role_changed", member],
        ["session.signed_in", member],
        ["invitation.created", invitation],
        ["stream.started", stream],
        ["webhook.deleted", webhook],
        ["key.created", randomUUID()],
        ["session.signed_out_everywhere", null],
      ];
      for (const [action, target] of entries)
        await db.query(
          `INSERT INTO audit_log (id, brand_id, at, actor, action, target_id, detail) VALUES ($1, $2, $3, 'operator', $4, $5, '')`,
          [randomUUID(), brand, now, action, target],
        );
      for (const name of files.filter((file) => file.startsWith("023"))) await apply(name);
      const rows = await db.query<{
        action: string;
        target_id: string | null;
        target_name: string | null;
        address: null;
      }>("SELECT action, target_id, target_name, address FROM audit_log ORDER BY action, target_name");
      expect(rows.map((row) => [row.action, row.target_name, row.address])).toEqual([
        ["invitation.created", "bo@example.com", null],
        ["key.created", "ci key", null],
        ["key.created", null, null],
        ["key.revoked", "ci key", null],
        ["member.role_changed", "ana@example.com", null],
        ["session.signed_in", "ana@example.com", null],
        ["session.signed_out_everywhere", null, null],
        ["stream.started", "Aurora earbuds", null],
        ["webhook.deleted", "https://hooks.example.com/a", null],
      ]);
    } finally {
      await db.close();
      await scratch?.drop();
    }
  });
});
