import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryErrorMaxLength, errorMessageMaxLength, offset, passwordMaxLength } from "../../generated/limits.ts";
import { ApiError } from "../domain/errors.ts";
import { webhookDelivery } from "../http/response-bodies.ts";
import { browser, invite, member } from "../../testkit/dashboard-browser.ts";
import { ADMIN_TOKEN, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";

// Every bound openapi.yaml states for a request, just past it: the contract's answer, never a
// 500. The rows marked "new" are bounds the server did not enforce before the contract stated them.
let server: TestServer;
let key: string;
let brandId: string;
/** The brand's owner, signed in in a browser of its own: it sends the dashboard rows. */
let owner: Awaited<ReturnType<typeof member>>;
let webhookId: string;
beforeAll(async () => {
  server = await startTestServer();
  ({ key, brandId } = await server.tenant());
  owner = await member(server, brandId, "bounds@example.com");
  webhookId = (await server.call("POST", "/api/v1/webhooks", { key, body: webhook(["stream.ended"]) })).body.webhook_id;
});
afterAll(() => server.close());

const UUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
const TOO_LONG_ID = `${UUID}0`;
const webhook = (events: string[]) => ({ url: "https://hooks.brand.example/livestream", events });

interface Row {
  bound: string;
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  admin?: boolean;
  /** A dashboard request (`path` under /dashboard/api/v1): sent with the owner's cookie, CSRF token and Origin. */
  dashboard?: boolean;
  status: number;
  code: string;
  /** What the error's message must say, where the code alone leaves the caller guessing. */
  message?: RegExp;
}

const rows = (): Row[] => [
  // Public API
  {
    bound: "GET /streams/{id} maxLength 36 (404, as any id that is not a UUID)",
    method: "GET",
    path: `/api/v1/streams/${TOO_LONG_ID}`,
    status: 404,
    code: "not_found",
  },
  {
    bound: "DELETE /streams/{id} maxLength 36",
    method: "DELETE",
    path: `/api/v1/streams/${"a".repeat(5000)}`,
    status: 404,
    code: "not_found",
  },
  {
    bound: "GET /analytics stream_id maxLength 36",
    method: "GET",
    path: `/api/v1/analytics?stream_id=${TOO_LONG_ID}`,
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /streams creator_id maxLength 64",
    method: "POST",
    path: "/api/v1/streams",
    body: streamBody({ creator_id: "a".repeat(65) }),
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /streams product_name maxLength 200",
    method: "POST",
    path: "/api/v1/streams",
    body: streamBody({ product_name: "a".repeat(201) }),
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /streams script maxLength 50000",
    method: "POST",
    path: "/api/v1/streams",
    body: streamBody({ script: "a".repeat(50_001) }),
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /streams duration_minutes maximum 480",
    method: "POST",
    path: "/api/v1/streams",
    body: streamBody({ duration_minutes: 481 }),
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /streams duration_minutes int32",
    method: "POST",
    path: "/api/v1/streams",
    body: streamBody({ duration_minutes: 2 ** 31 }),
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /streams Idempotency-Key maxLength 255",
    method: "POST",
    path: "/api/v1/streams",
    body: streamBody(),
    headers: { "idempotency-key": "k".repeat(256) },
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /webhooks url maxLength 2048",
    method: "POST",
    path: "/api/v1/webhooks",
    body: { ...webhook(["stream.ended"]), url: `https://hooks.brand.example/${"a".repeat(2048)}` },
    status: 400,
    code: "invalid_url",
  },
  {
    bound: "POST /webhooks events maxItems 3",
    method: "POST",
    path: "/api/v1/webhooks",
    body: webhook(["stream.started", "stream.ended", "stream.error", "stream.ended"]),
    status: 400,
    code: "invalid_events",
  },
  {
    bound: "new: GET /requests path maxLength 2048",
    method: "GET",
    path: `/api/v1/requests?path=/${"a".repeat(2048)}`,
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "new: GET /requests since maxLength 64",
    method: "GET",
    path: `/api/v1/requests?since=2026-11-20T14:00:00.${"1".repeat(60)}Z`,
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "new: GET /requests/{request_id} maxLength 128 (404, as any id no request has)",
    method: "GET",
    path: `/api/v1/requests/req_${"a".repeat(125)}`,
    status: 404,
    code: "not_found",
  },
  // Operator API
  {
    bound: "GET /brands/{brand_id} maxLength 36",
    admin: true,
    method: "GET",
    path: `/admin/v1/brands/${TOO_LONG_ID}`,
    status: 404,
    code: "not_found",
  },
  {
    bound: "PATCH /brands/{brand_id} maxLength 36",
    admin: true,
    method: "PATCH",
    path: `/admin/v1/brands/${TOO_LONG_ID}`,
    body: { plan: "growth" },
    status: 404,
    code: "not_found",
  },
  {
    bound: "DELETE /keys/{key_id} maxLength 36",
    admin: true,
    method: "DELETE",
    path: `/admin/v1/keys/${TOO_LONG_ID}`,
    status: 404,
    code: "not_found",
  },
  {
    bound: "POST /webhook-deliveries/{delivery_id}/retry maxLength 36",
    admin: true,
    method: "POST",
    path: `/admin/v1/webhook-deliveries/${TOO_LONG_ID}/retry`,
    status: 404,
    code: "not_found",
  },
  {
    bound: "GET /keys brand_id maxLength 36",
    admin: true,
    method: "GET",
    path: `/admin/v1/keys?brand_id=${TOO_LONG_ID}`,
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "GET /webhook-deliveries webhook_id maxLength 36",
    admin: true,
    method: "GET",
    path: `/admin/v1/webhook-deliveries?brand_id=${brandId}&webhook_id=${TOO_LONG_ID}`,
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /brands name maxLength 200",
    admin: true,
    method: "POST",
    path: "/admin/v1/brands",
    body: { name: "a".repeat(201), vertical: "igaming", plan: "growth" },
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /brands credits_cents maximum 2^53 - 1",
    admin: true,
    method: "POST",
    path: "/admin/v1/brands",
    body: { name: "B", vertical: "igaming", plan: "growth", credits_cents: 2 ** 53 },
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "PATCH /brands plan_minutes int32",
    admin: true,
    method: "PATCH",
    path: `/admin/v1/brands/${brandId}`,
    body: { plan_minutes: 2 ** 31 },
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /keys name maxLength 100",
    admin: true,
    method: "POST",
    path: "/admin/v1/keys",
    body: { brand_id: brandId, name: "a".repeat(101), environment: "test", scopes: ["streams:read"] },
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /keys scopes maxItems 5",
    admin: true,
    method: "POST",
    path: "/admin/v1/keys",
    body: {
      brand_id: brandId,
      name: "k",
      environment: "test",
      scopes: ["streams:read", "streams:write", "analytics:read", "webhooks:write", "logs:read", "streams:read"],
    },
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "new: POST /keys expires_at maxLength 64",
    admin: true,
    method: "POST",
    path: "/admin/v1/keys",
    body: {
      brand_id: brandId,
      name: "k",
      environment: "test",
      scopes: ["streams:read"],
      expires_at: `2099-01-01T00:00:00.${"1".repeat(60)}Z`,
    },
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /keys/revoke key maxLength 41",
    admin: true,
    method: "POST",
    path: "/admin/v1/keys/revoke",
    body: { key: `svc_test_${"a".repeat(33)}` },
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /invitations brand_id maxLength 36",
    admin: true,
    method: "POST",
    path: "/admin/v1/invitations",
    body: { brand_id: TOO_LONG_ID, email: "a@example.com" },
    status: 400,
    code: "invalid_fields",
  },
  {
    bound: "POST /invitations email maxLength 254",
    admin: true,
    method: "POST",
    path: "/admin/v1/invitations",
    body: { brand_id: brandId, email: LONG_EMAIL },
    status: 400,
    code: "invalid_fields",
  },
  // Dashboard API
  ...dashboardRows(),
];

/** An email of the right form, longer than 254 characters. */
const LONG_EMAIL = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(57)}.example`;

function dashboardRows(): Row[] {
  const row = (bound: string, method: string, path: string, status: number, code: string, body?: unknown): Row => ({
    bound,
    dashboard: true,
    method,
    path,
    status,
    code,
    ...(body === undefined ? {} : { body }),
  });
  const invalid = (bound: string, method: string, path: string, body?: unknown) =>
    row(bound, method, path, 400, "invalid_fields", body);
  const notFound = (bound: string, method: string, path: string, body?: unknown) =>
    row(bound, method, path, 404, "not_found", body);
  const signIn = { email: "bounds@example.com", password: "p" };
  // Every password field has the contract's one bound; the message names the field and the bound.
  const tooLong = "p".repeat(passwordMaxLength + 1);
  const password = (bound: string, path: string, field: string, body: Record<string, unknown>): Row => ({
    ...invalid(`dashboard ${bound} ${field} maxLength ${passwordMaxLength}`, bound.split(" ")[0]!, path, body),
    message: new RegExp(`${field}.*${passwordMaxLength}`),
  });
  return [
    invalid("dashboard POST /session email maxLength 254", "POST", "/session", { ...signIn, email: LONG_EMAIL }),
    password("POST /session", "/session", "password", { ...signIn, password: tooLong }),
    invalid("dashboard POST /session totp_code maxLength 32", "POST", "/session", {
      ...signIn,
      totp_code: "1".repeat(33),
    }),
    invalid("dashboard POST /invitations/inspect token maxLength 128", "POST", "/invitations/inspect", {
      token: "t".repeat(129),
    }),
    password("POST /invitations/accept", "/invitations/accept", "password", { token: "t", password: tooLong }),
    password("PUT /account/password", "/account/password", "current_password", {
      current_password: tooLong,
      new_password: "q".repeat(20),
    }),
    password("PUT /account/password", "/account/password", "new_password", {
      current_password: "p",
      new_password: tooLong,
    }),
    invalid("dashboard POST /account/totp/confirm code maxLength 32", "POST", "/account/totp/confirm", {
      code: "1".repeat(33),
    }),
    password("POST /account/totp/disable", "/account/totp/disable", "password", { password: tooLong }),
    invalid("dashboard POST /members/invitations email maxLength 254", "POST", "/members/invitations", {
      email: LONG_EMAIL,
      role: "viewer",
    }),
    notFound(
      "dashboard DELETE /members/invitations/{invitation_id} maxLength 36",
      "DELETE",
      `/members/invitations/${TOO_LONG_ID}`,
    ),
    notFound("dashboard PATCH /members/{member_id} maxLength 36", "PATCH", `/members/${TOO_LONG_ID}`, {
      role: "viewer",
    }),
    notFound("dashboard DELETE /members/{member_id} maxLength 36", "DELETE", `/members/${TOO_LONG_ID}`),
    invalid("dashboard GET /audit-log limit maximum 100", "GET", "/audit-log?limit=101"),
    invalid("dashboard GET /audit-log offset int32", "GET", `/audit-log?offset=${2 ** 31}`),
    invalid("dashboard POST /modes/{mode}/keys name maxLength 100", "POST", "/modes/test/keys", {
      name: "a".repeat(101),
      scopes: ["streams:read"],
    }),
    invalid("dashboard POST /modes/{mode}/keys scopes maxItems 5", "POST", "/modes/test/keys", {
      name: "k",
      scopes: ["streams:read", "streams:write", "analytics:read", "webhooks:write", "logs:read", "streams:read"],
    }),
    invalid("dashboard POST /modes/{mode}/keys expires_at maxLength 64", "POST", "/modes/test/keys", {
      name: "k",
      scopes: ["streams:read"],
      expires_at: `2099-01-01T00:00:00.${"1".repeat(60)}Z`,
    }),
    notFound("dashboard DELETE /modes/{mode}/keys/{key_id} maxLength 36", "DELETE", `/modes/test/keys/${TOO_LONG_ID}`),
    notFound(
      "dashboard GET /modes/{mode}/webhooks/{webhook_id}/deliveries webhook_id maxLength 36",
      "GET",
      `/modes/test/webhooks/${TOO_LONG_ID}/deliveries`,
    ),
    invalid(
      "dashboard GET /modes/{mode}/webhooks/{webhook_id}/deliveries limit maximum 100",
      "GET",
      `/modes/test/webhooks/${webhookId}/deliveries?limit=101`,
    ),
    notFound(
      "dashboard GET …/deliveries/{delivery_id} maxLength 36",
      "GET",
      `/modes/test/webhooks/${webhookId}/deliveries/${TOO_LONG_ID}`,
    ),
    invalid(
      "dashboard POST /modes/{mode}/streams product_name maxLength 200",
      "POST",
      "/modes/test/streams",
      streamBody({ product_name: "a".repeat(201) }),
    ),
    invalid(
      "dashboard POST /modes/{mode}/streams script maxLength 50000",
      "POST",
      "/modes/test/streams",
      streamBody({ script: "a".repeat(50_001) }),
    ),
    invalid(
      "dashboard POST /modes/{mode}/streams duration_minutes maximum 480",
      "POST",
      "/modes/test/streams",
      streamBody({ duration_minutes: 481 }),
    ),
    notFound("dashboard GET /modes/{mode}/streams/{id} maxLength 36", "GET", `/modes/test/streams/${TOO_LONG_ID}`),
    notFound(
      "dashboard DELETE /modes/{mode}/streams/{id} maxLength 36",
      "DELETE",
      `/modes/test/streams/${TOO_LONG_ID}`,
    ),
    invalid(
      "dashboard GET /modes/{mode}/analytics stream_id maxLength 36",
      "GET",
      `/modes/test/analytics?stream_id=${TOO_LONG_ID}`,
    ),
  ];
}

describe("a value past a bound openapi.yaml states gets the contract's answer", () => {
  it("covers every row", () => expect(rows().length).toBeGreaterThan(20));

  // Named at collection time; built again in the test, once the tenant's ids exist.
  it.each(rows().map((row) => row.bound))("%s", async (bound) => {
    const row = rows().find((candidate) => candidate.bound === bound)!;
    const response = row.dashboard
      ? await owner.send(row.method, row.path, row.body, row.headers)
      : await server.call(row.method, row.path, {
          key: row.admin ? ADMIN_TOKEN : key,
          body: row.body,
          headers: row.headers ?? {},
        });
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({
      status: row.status,
      code: row.code,
    });
    expect(response.body.error.message.length).toBeLessThanOrEqual(errorMessageMaxLength);
    expect(response.body.error.message).toMatch(row.message ?? /./);
  });
});

describe("values at a bound are accepted", () => {
  it("new: POST /keys with a 64-character expires_at is 201", async () => {
    const expiresAt = `2099-01-01T00:00:00.${"1".repeat(38)}+00:00`;
    expect(expiresAt).toHaveLength(64);
    const response = await server.call("POST", "/admin/v1/keys", {
      key: ADMIN_TOKEN,
      body: { brand_id: brandId, name: "k", environment: "test", scopes: ["streams:read"], expires_at: expiresAt },
    });
    expect(response.status).toBe(201);
  });

  it(`a dashboard password of ${passwordMaxLength} characters is set, signs in, is changed and checked`, async () => {
    const longest = "correct horse battery staple ".repeat(10).slice(0, passwordMaxLength);
    const next = `${longest.slice(1)}!`;
    expect([longest.length, next.length]).toEqual([passwordMaxLength, passwordMaxLength]);
    const email = "longest-password@example.com";
    const token = await invite(server, brandId, email, "developer");
    const invited = browser(server);
    await invited.send("GET", "/session");
    expect((await invited.send("POST", "/invitations/accept", { token, password: longest })).status).toBe(201);

    const signedIn = browser(server);
    await signedIn.send("GET", "/session");
    expect((await signedIn.send("POST", "/session", { email, password: longest })).status).toBe(200);
    const changed = await signedIn.send("PUT", "/account/password", { current_password: longest, new_password: next });
    expect(changed.status).toBe(200);
    expect((await signedIn.send("POST", "/account/totp/disable", { password: next })).status).toBe(200);
  });
});

describe("GET /streams still never answers 400 past its bounds: it clamps", () => {
  it.each([
    ["limit above its maximum", "?limit=101", { limit: 100, offset: 0 }],
    ["limit below its minimum", "?limit=0", { limit: 1, offset: 0 }],
    ["offset above its maximum (2^53 - 1)", "?offset=99999999999999999999", { limit: 20, offset: offset.max }],
    ["offset below its minimum", "?offset=-5", { limit: 20, offset: 0 }],
  ])("%s", async (_label, query, expected) => {
    const response = await server.call("GET", `/api/v1/streams${query}`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject(expected);
  });

  it("new: a status longer than its maxLength (32) is cut and matches nothing", async () => {
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    for (const status of [`live${"x".repeat(40)}`, "é".repeat(33), "live".repeat(500)]) {
      const response = await server.call("GET", `/api/v1/streams?status=${encodeURIComponent(status)}`, { key });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ streams: [], total: 0 });
    }
    expect((await server.call("GET", "/api/v1/streams?status=live", { key })).body.total).toBe(1);
  });
});

describe("DELETE /webhooks still answers only missing_fields as a 400: a long id is cut, never refused", () => {
  it("a 36-character id is echoed as sent", async () => {
    const id = "x".repeat(36);
    const response = await server.call("DELETE", `/api/v1/webhooks?id=${id}`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ webhook_id: id, deleted: true });
  });

  it("new: a longer id is cut to 35 characters and …, so it can never name (and delete) a webhook", async () => {
    const registered = await server.call("POST", "/api/v1/webhooks", { key, body: webhook(["stream.ended"]) });
    const id = `${registered.body.webhook_id}0`;
    const response = await server.call("DELETE", `/api/v1/webhooks?id=${id}`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ webhook_id: `${id.slice(0, 35)}…`, deleted: true });
    const listed = await server.call("GET", "/api/v1/webhooks", { key });
    expect(listed.body.webhooks.map((hook: { webhook_id: string }) => hook.webhook_id)).toContain(
      registered.body.webhook_id,
    );
  });
});

describe("answers the server writes stay within the contract's bounds", () => {
  it("new: an error message quoting a long undocumented field is cut to the contract's maxLength", async () => {
    const field = "f".repeat(5000);
    const response = await server.call("POST", "/api/v1/streams", { key, body: { ...streamBody(), [field]: 1 } });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_fields");
    expect(Array.from(response.body.error.message as string)).toHaveLength(errorMessageMaxLength);
    expect(response.body.error.message).toMatch(/^Invalid field f+…$/);
  });

  it("new: ApiError cuts by characters and never splits a surrogate pair", () => {
    const message = new ApiError("invalid_fields", "😀".repeat(errorMessageMaxLength + 1)).message;
    expect(Array.from(message)).toHaveLength(errorMessageMaxLength);
    expect(message.endsWith("😀…")).toBe(true);
    expect(new ApiError("invalid_fields", "short").message).toBe("short");
  });

  it("new: a delivery's failure reason is cut to WebhookDelivery error's maxLength", () => {
    const now = new Date();
    const delivery = {
      id: UUID,
      webhookId: UUID,
      eventId: "evt_0",
      eventType: "stream.ended",
      attempt: 1,
      status: "pending",
      responseStatus: null,
      error: `dns lookup failed: ${"h".repeat(5000)}`,
      nextAttemptAt: now,
      lastAttemptAt: now,
      createdAt: now,
    } as Parameters<typeof webhookDelivery>[0];
    expect(Array.from(webhookDelivery(delivery).error!)).toHaveLength(deliveryErrorMaxLength);
    expect(webhookDelivery({ ...delivery, error: "HTTP 503" }).error).toBe("HTTP 503");
  });
});
