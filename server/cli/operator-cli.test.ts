import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateApiKey, hashApiKey } from "../domain/keys.ts";
import { insertKey } from "../store/keys.ts";
import type { DeliveryOutcome } from "../providers/webhook-transport.ts";
import { ADMIN_TOKEN, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";
import { COMMANDS, runAdmin } from "./operator-cli.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL_EXCEPT_LINE_BREAKS = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

let server: TestServer;
let outcome: DeliveryOutcome = { ok: false, status: null, error: "refused: url is not https", permanent: true };
beforeAll(async () => {
  server = await startTestServer({ delivery: { transport: { send: async () => outcome } } });
});
afterAll(() => server.close());

/** Runs a command line against the test server; `env` replaces the CLI's settings. */
async function admin(
  argv: string[],
  env: Record<string, string | undefined> = { ADMIN_URL: `${server.baseUrl}/admin/v1`, ADMIN_TOKEN },
) {
  let out = "";
  let err = "";
  const code = await runAdmin(argv, { env, out: (text) => (out += `${text}\n`), err: (text) => (err += `${text}\n`) });
  return { code, out, err, json: () => JSON.parse(out) };
}

describe("help, without a token", () => {
  it("lists every command at the top level", async () => {
    for (const argv of [["--help"], ["-h"], ["help"]]) {
      const { code, out } = await admin(argv, {});
      expect(code).toBe(0);
      for (const name of Object.keys(COMMANDS)) expect(out).toContain(name);
      expect(out).toMatch(/ADMIN_TOKEN[\s\S]*ADMIN_URL/);
    }
  });

  it("explains each command and its options", async () => {
    for (const name of Object.keys(COMMANDS)) {
      const { code, out } = await admin([...name.split(" "), "--help"], {});
      expect(code, name).toBe(0);
      expect(out).toContain(`Usage: npm run admin -- ${COMMANDS[name]!.usage}`);
      for (const flag of Object.keys(COMMANDS[name]!.flags ?? {})) expect(out).toContain(`--${flag}`);
    }
  });

  it("refuses an unknown command or a missing option with exit 2 and where to look", async () => {
    expect(await admin(["brands", "delete"])).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown command "brands delete"'),
    });
    expect(await admin(["keys", "list"])).toMatchObject({
      code: 2,
      err: expect.stringContaining("--brand is required"),
    });
    expect(await admin(["brands", "get"])).toMatchObject({
      code: 2,
      err: expect.stringContaining("give one <brand_id>"),
    });
    expect(await admin(["brands", "update", "x", "--credits-cents", "12.5"])).toMatchObject({
      code: 2,
      err: expect.stringContaining("--credits-cents must be a whole number"),
    });
    expect(await admin(["brands", "list"], { ADMIN_URL: `${server.baseUrl}/admin/v1` })).toMatchObject({
      code: 2,
      err: expect.stringContaining("ADMIN_TOKEN must be set"),
    });
  });
});

describe("commands against the operator API", () => {
  it("brands create, get, update, list", async () => {
    const created = await admin([
      "brands",
      "create",
      "--name",
      "CLI Casino",
      "--vertical",
      "igaming",
      "--plan",
      "growth",
      "--credits-cents",
      "5000",
    ]);
    expect(created.code, created.err).toBe(0);
    const brand = created.json();
    expect(brand).toMatchObject({ name: "CLI Casino", vertical: "igaming", plan: "growth", credits_cents: 5000 });
    expect((await admin(["brands", "get", brand.brand_id])).json()).toEqual(brand);
    const updated = await admin([
      "brands",
      "update",
      brand.brand_id,
      "--plan",
      "enterprise",
      "--max-active-streams",
      "5",
    ]);
    expect(updated.json()).toMatchObject({ plan: "enterprise", max_active_streams: 5 });
    expect((await admin(["brands", "list"])).json().brands).toContainEqual(updated.json());
  });

  it("a key name with an escape sequence is refused, and one stored before is printed escaped", async () => {
    const { id: brandId } = await server.brand();
    const osc8 = "\x1b]8;;https://evil.example/\x1b\\Staging\x1b]8;;\x1b\\";
    const refused = await admin([
      "keys",
      "create",
      "--brand",
      brandId,
      "--name",
      osc8,
      "--environment",
      "test",
      "--scopes",
      "streams:read",
    ]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("invalid_fields");
    // A name from before the rule, with C1 and DEL, which JSON does not escape.
    await insertKey(
      server.db,
      {
        id: randomUUID(),
        brandId,
        name: "old\u009b2J\x7fkey",
        lastFour: "abcd",
        environment: "test",
        scopes: ["streams:read"],
        createdAt: server.clock(),
        expiresAt: null,
        revokedAt: null,
      },
      hashApiKey(generateApiKey("test")),
    );
    const listed = await admin(["keys", "list", "--brand", brandId]);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain('"name": "old\\x9b2J\\x7fkey"');
    for (const printed of [refused.out, refused.err, listed.out, listed.err])
      expect(printed).not.toMatch(CONTROL_EXCEPT_LINE_BREAKS);
  });

  it("keys create, list, revoke by id and by the key itself", async () => {
    const { id: brandId } = await server.brand();
    const create = (name: string) =>
      admin([
        "keys",
        "create",
        "--brand",
        brandId,
        "--name",
        name,
        "--environment",
        "test",
        "--scopes",
        "streams:read, streams:write",
      ]);
    const first = (await create("first")).json();
    server.clock.advance(1_000);
    const second = (await create("second")).json();
    expect(first).toMatchObject({
      key: expect.stringMatching(/^svc_test_/),
      scopes: ["streams:read", "streams:write"],
    });

    const listed = await admin(["keys", "list", "--brand", brandId]);
    expect(listed.json().keys.map((key: { name: string; key_hint: string }) => [key.name, key.key_hint])).toEqual([
      ["first", `svc_test_…${first.key.slice(-4)}`],
      ["second", `svc_test_…${second.key.slice(-4)}`],
    ]);
    expect(listed.out).not.toContain(first.key);
    // A name tells keys apart: a second active "first" is refused, naming the one that has it.
    const again = await create("first");
    expect(again.code).not.toBe(0);
    expect(again.err).toContain("key_name_taken");
    expect(again.err).toContain(`svc_test_…${first.key.slice(-4)}`);

    expect((await admin(["keys", "revoke", first.key_id])).json()).toEqual({ key_id: first.key_id, revoked: true });
    expect((await admin(["keys", "revoke", second.key])).json()).toEqual({ key_id: second.key_id, revoked: true });
    expect((await server.call("GET", "/api/v1/streams", { key: second.key })).status).toBe(401);
    expect(
      (await admin(["keys", "list", "--brand", brandId]))
        .json()
        .keys.every((key: { revoked_at: string | null }) => key.revoked_at !== null),
    ).toBe(true);
    // Once revoked, its name is free again.
    expect((await create("first")).json().key).toMatch(/^svc_test_/);
  });

  it("deliveries list (and the old `deliveries --brand`), deliveries retry", async () => {
    const { brandId, key } = await server.tenant();
    await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: "https://hooks.example.com/cli", events: ["stream.started"] },
    });
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    outcome = { ok: false, status: null, error: "refused: url is not https", permanent: true };
    await server.deliver();
    const [failed] = (await admin(["deliveries", "list", "--brand", brandId, "--status", "failed"])).json().deliveries;
    expect(failed).toMatchObject({ status: "failed", attempt: 1 });
    expect((await admin(["deliveries", "--brand", brandId])).json().deliveries).toEqual([failed]);

    expect((await admin(["deliveries", "retry", failed.delivery_id])).json()).toMatchObject({
      delivery_id: failed.delivery_id,
      status: "pending",
    });
    outcome = { ok: true, status: 200 };
    await server.deliver();
    // Sent again as a new series of attempts: its first succeeded.
    expect((await admin(["deliveries", "list", "--brand", brandId])).json().deliveries[0]).toMatchObject({
      status: "succeeded",
      attempt: 1,
    });

    const again = await admin(["deliveries", "retry", failed.delivery_id]);
    expect(again).toMatchObject({
      code: 1,
      err: "admin deliveries retry: invalid_fields: Only a failed delivery can be retried; this one is succeeded.\n",
    });
  });

  it("members invite prints a one-time link to the dashboard (an owner by default)", async () => {
    const { id: brandId } = await server.brand();
    const invited = await admin(["members", "invite", "--brand", brandId, "--email", "Ana@Example.com"]);
    expect(invited.code, invited.err).toBe(0);
    const invitation = invited.json();
    expect(invitation).toMatchObject({
      brand_id: brandId,
      email: "ana@example.com",
      role: "owner",
      url: expect.stringMatching(/\/dashboard\/invitation#[\w-]{20,}$/),
    });
    // The link's token is what the dashboard's invitation page sends.
    const csrf = await server.call("GET", "/dashboard/api/v1/session");
    const headers = {
      origin: server.baseUrl,
      "x-csrf-token": csrf.body.csrf_token,
      cookie: `lsh_csrf=${csrf.body.csrf_token}`,
    };
    const inspected = await server.call("POST", "/dashboard/api/v1/invitations/inspect", {
      headers,
      body: { token: invitation.url.split("#")[1] },
    });
    expect(inspected.body).toMatchObject({ email: "ana@example.com", role: "owner", brand_name: "Test Brand" });

    expect(
      (await admin(["members", "invite", "--brand", brandId, "--email", "bo@example.com", "--role", "viewer"])).json(),
    ).toMatchObject({ role: "viewer" });
    expect(await admin(["members", "invite", "--brand", brandId])).toMatchObject({
      code: 2,
      err: expect.stringContaining("--email is required"),
    });
    expect(
      await admin([
        "members",
        "invite",
        "--brand",
        "6f1c2a52-0000-4000-8000-000000000001",
        "--email",
        "cy@example.com",
      ]),
    ).toMatchObject({
      code: 1,
      err: "admin members invite: not_found: No brand with id 6f1c2a52-0000-4000-8000-000000000001.\n",
    });
    expect(
      await admin(["members", "invite", "--brand", brandId, "--email", "dee@example.com", "--role", "admin"]),
    ).toMatchObject({ code: 1, err: expect.stringContaining("invalid_fields") });
  });

  it("members reset-password prints a one-hour link; members unlock clears the throttle", async () => {
    const { id: brandId } = await server.brand();
    const token = (await admin(["members", "invite", "--brand", brandId, "--email", "lost@example.com"])).json().url;
    const csrf = await server.call("GET", "/dashboard/api/v1/session");
    const headers = {
      origin: server.baseUrl,
      "x-csrf-token": csrf.body.csrf_token,
      cookie: `lsh_csrf=${csrf.body.csrf_token}`,
    };
    const password = "a long and private passphrase";
    const accept = { token: token.split("#")[1], password };
    expect((await server.call("POST", "/dashboard/api/v1/invitations/accept", { headers, body: accept })).status).toBe(
      201,
    );
    const issued = await admin(["members", "reset-password", "--email", "Lost@Example.com", "--turn-off-two-factor"]);
    expect(issued.code, issued.err).toBe(0);
    expect(issued.json()).toMatchObject({
      brand_id: brandId,
      email: "lost@example.com",
      url: expect.stringMatching(/\/dashboard\/reset#[\w-]{20,}$/),
    });
    const inspected = await server.call("POST", "/dashboard/api/v1/password-resets/inspect", {
      headers,
      body: { token: issued.json().url.split("#")[1] },
    });
    expect(inspected.body).toMatchObject({ email: "lost@example.com", turns_off_two_factor: true });
    expect((await admin(["members", "unlock", "--email", "lost@example.com"])).json()).toMatchObject({
      email: "lost@example.com",
      cleared: true,
    });
    expect(await admin(["members", "unlock", "--email", "nobody@example.com"])).toMatchObject({
      code: 1,
      err: expect.stringContaining("not_found"),
    });
  });

  it("says what the server answered when it refuses", async () => {
    expect(await admin(["brands", "get", "6f1c2a52-0000-4000-8000-000000000001"])).toMatchObject({
      code: 1,
      err: "admin brands get: not_found: No brand with id 6f1c2a52-0000-4000-8000-000000000001.\n",
    });
    expect(
      await admin(["brands", "list"], {
        ADMIN_URL: `${server.baseUrl}/admin/v1`,
        ADMIN_TOKEN: "a-wrong-token-0123456789",
      }),
    ).toMatchObject({
      code: 1,
      err: expect.stringContaining("refused the operator token: set ADMIN_TOKEN to the server's own"),
    });
  });
});

describe("a server without the operator API, or none at all", () => {
  it("says to start the server with ADMIN_TOKEN set", async () => {
    const plain = await startTestServer({ config: { adminToken: undefined } });
    try {
      const env = { ADMIN_URL: `${plain.baseUrl}/admin/v1`, ADMIN_TOKEN };
      for (const argv of [
        ["brands", "list"],
        ["brands", "get", "6f1c2a52-0000-4000-8000-000000000001"],
      ]) {
        expect(await admin(argv, env)).toMatchObject({
          code: 1,
          err: `admin ${argv[0]} ${argv[1]}: the server at ${plain.baseUrl}/admin/v1 has no operator API: start it with ADMIN_TOKEN set (or check ADMIN_URL).\n`,
        });
      }
    } finally {
      await plain.close();
    }
  });

  it("says where it looked when nothing answers, the URL taken from PORT", async () => {
    const { code, err } = await admin(["brands", "list"], { PORT: "1023", ADMIN_TOKEN });
    expect(code).toBe(1);
    expect(err).toMatch(
      /^admin: cannot reach the operator API at http:\/\/localhost:1023\/admin\/v1 \(\w+\): is the server running\?/,
    );
  });
});
