// A brand's caps on what its members and the operator create (usable keys, open invitations,
// members) and the lists that show them, on each engine: one past the cap is refused with its
// documented code from every creation path, and every page still answers 200 within the
// contract's maxItems, also for a brand whose data grew past the cap before the caps existed.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brandCaps, webhooksPerBrand } from "../../generated/limits.ts";
import { generateApiKey, hashApiKey } from "../domain/keys.ts";
import { sha256Hex } from "../domain/secrets.ts";
import { browser, DASHBOARD_API, invite, member, PASSWORD } from "../../testkit/dashboard-browser.ts";
import { ADMIN_TOKEN, availableEngines, startTestServer, type TestServer } from "../../testkit/harness.ts";
import { insertKey } from "../store/keys.ts";
import { insertInvitation } from "../store/invitations.ts";
import { insertMember } from "../store/members.ts";
import { insertWebhook } from "../store/webhooks.ts";

const ROOMY = 1_000_000;
const ALL_SCOPES = ["streams:read", "streams:write", "analytics:read", "webhooks:write"];

/** `count` calls of `make(i)`, `width` at a time. */
async function inBatches<T>(count: number, width: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += width) {
    const batch = Array.from({ length: Math.min(width, count - start) }, (_, j) => make(start + j));
    results.push(...(await Promise.all(batch)));
  }
  return results;
}

/** `count` usable test keys of the brand, written through the store (as data from before the caps). */
function seedKeys(server: TestServer, brandId: string, count: number) {
  return inBatches(count, 50, (i) =>
    insertKey(
      server.db,
      {
        id: randomUUID(),
        brandId,
        name: `seeded key ${i}`,
        lastFour: "abcd",
        environment: "test",
        scopes: ["streams:read"],
        createdAt: new Date(),
        expiresAt: null,
        revokedAt: null,
      },
      hashApiKey(generateApiKey("test")),
    ),
  );
}

describe.each(availableEngines())("per-brand caps on %s", { timeout: 180_000 }, (engine) => {
  let server: TestServer;
  const admin = (method: string, path: string, body?: unknown) =>
    server.call(method, `/admin/v1${path}`, { key: ADMIN_TOKEN, ...(body === undefined ? {} : { body }) });
  const adminKey = (brandId: string, i: number) =>
    admin("POST", "/keys", { brand_id: brandId, name: `key ${i}`, environment: "test", scopes: ALL_SCOPES });

  beforeAll(async () => {
    // The creations below are thousands of dashboard requests in a minute: no request limit.
    server = await startTestServer({
      engine,
      config: { dashboardRateLimit: { perSession: ROOMY, perAddress: ROOMY } },
    });
  }, 120_000);
  afterAll(() => server?.close());

  it(`keys: one more usable key than the cap (${brandCaps.keys}) is 409 key_limit from the dashboard and the operator API; the pages answer 200`, async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, `keys-${engine}@example.com`);
    const made = await inBatches(brandCaps.keys, 25, (i) => adminKey(brandId, i));
    expect(made.every((response) => response.status === 201)).toBe(true);

    const fromDashboard = await owner.send("POST", "/modes/test/keys", { name: "one too many", scopes: ALL_SCOPES });
    expect(fromDashboard.status).toBe(409);
    expect(fromDashboard.body.error.code).toBe("key_limit");
    expect(fromDashboard.body.error.message).toMatch(/1,000 usable API keys/);
    const fromOperator = await adminKey(brandId, brandCaps.keys);
    expect(fromOperator.status).toBe(409);
    expect(fromOperator.body.error.code).toBe("key_limit");

    const page = await owner.send("GET", "/modes/test/keys");
    expect(page.status).toBe(200);
    expect(page.body.keys).toHaveLength(brandCaps.keys);
    const operatorList = await admin("GET", `/keys?brand_id=${brandId}`);
    expect(operatorList.status).toBe(200);
    expect(operatorList.body.keys).toHaveLength(brandCaps.keys);

    // A revoked key frees its place; the list then shows every usable key, the new one included.
    const revoked = await owner.send("DELETE", `/modes/test/keys/${made[0]!.body.key_id}`);
    expect(revoked.status).toBe(200);
    const replacement = await owner.send("POST", "/modes/test/keys", { name: "replacement", scopes: ALL_SCOPES });
    expect(replacement.status).toBe(201);
    const after = await owner.send("GET", "/modes/test/keys");
    expect(after.status).toBe(200);
    expect(after.body.keys).toHaveLength(brandCaps.keys);
    expect(after.body.keys.every((key: { revoked_at: string | null }) => key.revoked_at === null)).toBe(true);
    const listed = after.body.keys.map((key: { key_id: string }) => key.key_id);
    expect(listed).toContain(replacement.body.key_id);
    expect(listed).not.toContain(made[0]!.body.key_id);
  });

  it("keys: creations racing for the last place: exactly one is made", async () => {
    const { id: brandId } = await server.brand();
    await seedKeys(server, brandId, brandCaps.keys - 1);
    const racing = await Promise.all(Array.from({ length: 6 }, (_, i) => adminKey(brandId, 5000 + i)));
    expect(racing.map((response) => response.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });

  it(`invitations: one more open invitation than the cap (${brandCaps.openInvitations}) is 409 invitation_limit; the members page answers 200`, async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, `invitations-${engine}@example.com`);
    const made = await inBatches(brandCaps.openInvitations, 25, (i) =>
      owner.send("POST", "/members/invitations", { email: `guest-${i}@invited.example`, role: "viewer" }),
    );
    expect(made.every((response) => response.status === 201)).toBe(true);

    const fromDashboard = await owner.send("POST", "/members/invitations", {
      email: "late@invited.example",
      role: "viewer",
    });
    expect(fromDashboard.status).toBe(409);
    expect(fromDashboard.body.error.code).toBe("invitation_limit");
    const fromOperator = await admin("POST", "/invitations", { brand_id: brandId, email: "late@invited.example" });
    expect(fromOperator.status).toBe(409);
    expect(fromOperator.body.error.code).toBe("invitation_limit");

    const page = await owner.send("GET", "/members");
    expect(page.status).toBe(200);
    expect(page.body.invitations).toHaveLength(brandCaps.openInvitations);
  });

  it(`members: with ${brandCaps.members} members, inviting and accepting are 409 member_limit; the invitation stays open`, async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, `members-${engine}@example.com`);
    const pending = await invite(server, brandId, `last-${engine}@example.com`, "viewer");
    // Members are made through the store: an acceptance hashes a password with argon2, and a
    // thousand of them would take minutes. The caps are checked where members are made, not here.
    await inBatches(brandCaps.members - 1, 25, (i) =>
      insertMember(server.db, {
        id: randomUUID(),
        brandId,
        email: `member-${i}-${engine}@example.com`,
        role: "viewer",
        passwordHash: "not a usable hash",
        createdAt: new Date(),
      }),
    );

    const newcomer = browser(server);
    await newcomer.send("GET", "/session");
    const accepted = await newcomer.send("POST", "/invitations/accept", { token: pending, password: PASSWORD });
    expect(accepted.status).toBe(409);
    expect(accepted.body.error.code).toBe("member_limit");
    const stillOpen = await newcomer.send("POST", "/invitations/inspect", { token: pending });
    expect(stillOpen.status).toBe(200);

    const invited = await owner.send("POST", "/members/invitations", {
      email: "one-more@invited.example",
      role: "viewer",
    });
    expect(invited.status).toBe(409);
    expect(invited.body.error.code).toBe("member_limit");
    const byOperator = await admin("POST", "/invitations", { brand_id: brandId, email: "one-more@invited.example" });
    expect(byOperator.status).toBe(409);
    expect(byOperator.body.error.code).toBe("member_limit");

    const page = await owner.send("GET", "/members");
    expect(page.status).toBe(200);
    expect(page.body.members).toHaveLength(brandCaps.members);
  });

  it("a brand that grew past the caps before they existed: every page answers 200, within maxItems", async () => {
    const { id: brandId } = await server.brand();
    const owner = await member(server, brandId, `grown-${engine}@example.com`);
    const now = new Date();
    const past = brandCaps.keys + 1;
    await seedKeys(server, brandId, past);
    await inBatches(past, 50, (i) =>
      insertInvitation(
        server.db,
        {
          id: randomUUID(),
          brandId,
          email: `old-${i}@invited.example`,
          role: "viewer",
          createdAt: now,
          expiresAt: new Date(now.getTime() + 3_600_000),
        },
        sha256Hex(`token ${brandId} ${i}`),
        null,
      ),
    );
    // A key to list webhooks with, and webhooks registered before their cap of 16 per brand and mode.
    const testKey = generateApiKey("test");
    await insertKey(
      server.db,
      {
        id: randomUUID(),
        brandId,
        name: "webhooks",
        lastFour: testKey.slice(-4),
        environment: "test",
        scopes: ["webhooks:write"],
        createdAt: now,
        expiresAt: null,
        revokedAt: null,
      },
      hashApiKey(testKey),
    );
    await inBatches(webhooksPerBrand + 4, 10, (i) =>
      insertWebhook(server.db, {
        id: randomUUID(),
        brandId,
        mode: "test",
        url: `https://hooks-${i}.example/receive`,
        events: ["stream.started"],
        secret: `whsec_${i}`,
        createdAt: new Date(now.getTime() + i),
      }),
    );
    for (const path of ["/modes/test/keys", "/members", "/audit-log?limit=100"]) {
      const page = await owner.send("GET", path);
      expect(page.status, `${DASHBOARD_API}${path}`).toBe(200);
    }
    expect((await owner.send("GET", "/modes/test/keys")).body.keys).toHaveLength(brandCaps.keys);
    expect((await owner.send("GET", "/members")).body.invitations).toHaveLength(brandCaps.openInvitations);
    const hooks = await server.call("GET", "/api/v1/webhooks", { key: testKey });
    expect(hooks.status).toBe(200);
    expect(hooks.body.webhooks.map((hook: { url: string }) => hook.url)).toEqual(
      Array.from({ length: webhooksPerBrand }, (_, i) => `https://hooks-${i}.example/receive`),
    );
    expect((await owner.send("GET", "/modes/test/webhooks")).status).toBe(200);
    const operatorList = await admin("GET", `/keys?brand_id=${brandId}`);
    expect(operatorList.status).toBe(200);
    expect(operatorList.body.keys).toHaveLength(brandCaps.keys);
    // And over the cap, one more is refused.
    expect((await owner.send("POST", "/modes/test/keys", { name: "more", scopes: ALL_SCOPES })).body.error.code).toBe(
      "key_limit",
    );
  });
});
