import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";

// Inputs found to slip past validation once: each must get a documented 4xx, never a 500.
let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  ({ key } = await server.tenant());
});
afterAll(() => server.close());

describe("paths are case-sensitive and a miscased path is 404, never served unauthenticated", () => {
  it.each([
    "/API/v1/streams",
    "/api/V1/streams",
    "/api/v1/Streams",
    "/api/v1/ANALYTICS",
    "/api/v1/Webhooks",
    "/API/V1/",
  ])("GET %s", async (path) => {
    for (const auth of [undefined, key]) {
      const response = await server.call("GET", path, auth ? { key: auth } : {});
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("not_found");
    }
  });
});

describe("a NUL character in a text field is 400 invalid_fields naming the field", () => {
  it.each(["product_name", "script", "creator_id"])("POST /streams with NUL in %s", async (field) => {
    const response = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ [field]: "a\u0000b" }) });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_fields");
    expect(response.body.error.message).toContain(field);
  });

  it("POST /webhooks with NUL in url is 400 invalid_url, as every unacceptable url", async () => {
    const response = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: "https://hooks.example.com/\u0000", events: ["stream.ended"] },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_url");
  });

  it("GET /streams?status=%00 matches nothing instead of failing", async () => {
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const response = await server.call("GET", "/api/v1/streams?status=%00", { key });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ streams: [], total: 0 });
  });
});

describe("a path that is not valid percent-encoding is 404 not_found", () => {
  it.each(["GET", "DELETE"])("%s /streams/%ZZ", async (method) => {
    const response = await server.call(method, "/api/v1/streams/%ZZ", { key });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("not_found");
  });
});

describe("DELETE /webhooks with a repeated id uses the first and stays idempotent", () => {
  it("?id=a&id=b", async () => {
    const response = await server.call("DELETE", "/api/v1/webhooks?id=a&id=b", { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ webhook_id: "a", deleted: true });
  });

  it("?id[]=a names no `id` parameter: 400 missing_fields, the one documented 400", async () => {
    const response = await server.call("DELETE", "/api/v1/webhooks?id[]=a", { key });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("missing_fields");
  });
});

describe("operator limits that would not fit storage are 400, not 500", () => {
  it.each([
    ["rate_limit_per_minute", 0],
    ["rate_limit_per_minute", 3_000_000_000],
    ["max_active_streams", 3_000_000_000],
    ["plan_minutes", 3_000_000_000],
    ["credits_cents", 1e19],
  ])("POST /admin/v1/brands with %s = %d", async (field, value) => {
    const body = { name: "Big", vertical: "igaming", plan: "growth", [field]: value };
    const response = await server.call("POST", "/admin/v1/brands", { key: ADMIN_TOKEN, body });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_fields");
    expect(response.body.error.message).toContain(field);
  });

  it("a brand name with a NUL character", async () => {
    const response = await server.call("POST", "/admin/v1/brands", {
      key: ADMIN_TOKEN,
      body: { name: "a\u0000", vertical: "igaming", plan: "growth" },
    });
    expect(response.status).toBe(400);
  });
});

describe("HEAD answers as GET without a body", () => {
  it("HEAD /api/v1/creators has GET's status and Cache-Control", async () => {
    const response = await server.call("HEAD", "/api/v1/creators");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, max-age=60");
    expect(response.text).toBe("");
  });

  it("HEAD /api/v1/streams is still authenticated", async () => {
    expect((await server.call("HEAD", "/api/v1/streams")).status).toBe(401);
    expect((await server.call("HEAD", "/api/v1/streams", { key })).status).toBe(200);
  });
});

describe("a body sent to an operation that takes none is not read", () => {
  it("DELETE /streams/{id} with malformed JSON answers as without it: 404 not_found, not 400", async () => {
    const response = await server.call("DELETE", "/api/v1/streams/7c9e6679-7425-40de-944b-e07fc1f90ae7", {
      key,
      rawBody: "{",
    });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("not_found");
  });

  it("GET /creators with malformed JSON answers 200", async () => {
    const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`${server.baseUrl}/api/v1/creators`);
      const req = request(
        url,
        { method: "GET", headers: { "content-type": "application/json", "content-length": "1" } },
        (res) => {
          let body = "";
          res.on("data", (chunk) => (body += chunk));
          res.on("end", () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on("error", reject);
      req.end("{");
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).creators.length).toBeGreaterThan(0);
  });

  it("a path no operation has, with malformed JSON, is 404 not_found", async () => {
    const response = await server.call("POST", "/api/v1/nothing-here", { key, rawBody: "{" });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("not_found");
  });

  it("an operation that takes a body still refuses malformed JSON: 400 missing_fields", async () => {
    const response = await server.call("POST", "/api/v1/streams", { key, rawBody: "{" });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("missing_fields");
  });
});
