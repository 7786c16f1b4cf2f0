import { describe, expect, it } from "vitest";
import { createClient } from "./client.ts";
import {
  ApiError,
  ConcurrencyLimitError,
  errorFromBody,
  InsufficientCreditsError,
  NotFoundError,
  UnauthorizedError,
  VerticalMismatchError,
} from "./errors.ts";
import { apiError, json, scriptedFetch } from "./test-helpers.ts";

describe("errorFromBody", () => {
  it("builds the subclass of the wire code, with status, code, message and raw body", () => {
    const body = { error: { code: "concurrency_limit", message: "Brand already has 3 active streams." } };
    const error = errorFromBody(429, body);
    expect(error).toBeInstanceOf(ConcurrencyLimitError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: "ConcurrencyLimitError",
      status: 429,
      code: "concurrency_limit",
      message: "Brand already has 3 active streams.",
      raw: body,
    });
  });

  it("carries the response's headers and its Request-Id", () => {
    const response = new Response(null, {
      status: 404,
      headers: { "Request-Id": "req_0123456789", "RateLimit-Remaining": "99" },
    });
    const error = errorFromBody(404, { error: { code: "not_found", message: "gone" } }, response);
    expect(error.headers.get("RateLimit-Remaining")).toBe("99");
    expect(error.requestId).toBe("req_0123456789");
  });

  it("has empty headers and no request id when built without a response", () => {
    const error = errorFromBody(502, "<html>");
    expect([...error.headers]).toEqual([]);
    expect(error.requestId).toBeUndefined();
  });

  it("tells codes sharing a status apart", () => {
    expect(errorFromBody(402, { error: { code: "insufficient_credits", message: "" } })).toBeInstanceOf(
      InsufficientCreditsError,
    );
    expect(errorFromBody(403, { error: { code: "vertical_mismatch", message: "m" } })).toBeInstanceOf(
      VerticalMismatchError,
    );
  });

  it.each([
    ["an HTML page", "<html>Bad gateway</html>", /not an API error.*Bad gateway/],
    ["an empty body", undefined, /not an API error.*\(empty body\)/],
    ["null", null, /not an API error/],
    ["an error that is a string", { error: "boom" }, /not an API error/],
    [
      "an unknown code",
      { error: { code: "teapot", message: "short and stout" } },
      /unrecognised error code "teapot": short and stout/,
    ],
    ["a code that is not a string", { error: { code: 42 } }, /unrecognised error code 42/],
  ])("turns %s into a plain ApiError with code undefined and a clear message", (_name, body, message) => {
    const error = errorFromBody(502, body);
    expect(error.constructor).toBe(ApiError);
    expect(error.code).toBeUndefined();
    expect(error.status).toBe(502);
    expect(error.raw).toBe(body);
    expect(error.message).toMatch(message);
  });

  it("never throws on a body that cannot be serialised", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(errorFromBody(500, cyclic).message).toMatch(/not an API error/);
  });
});

describe("createClient", () => {
  it("sends the key as a bearer token, client headers, and per-call headers", async () => {
    const { fetch, requests } = scriptedFetch(json(200, { webhooks: [] }));
    const client = createClient({
      baseUrl: "https://api.example.test/api/v1/",
      apiKey: "svc_test_k",
      fetch,
      headers: { Prefer: "code=200" },
    });
    await client.webhooks.list({ headers: { "X-Request": "r1" } });
    const [request] = requests;
    expect(request?.url).toBe("https://api.example.test/api/v1/webhooks");
    expect(request?.headers.get("Authorization")).toBe("Bearer svc_test_k");
    expect(request?.headers.get("Prefer")).toBe("code=200");
    expect(request?.headers.get("X-Request")).toBe("r1");
  });

  it("sends no Authorization header without a key, and says so on 401", async () => {
    const { fetch, requests } = scriptedFetch(
      json(200, { creators: [] }),
      apiError(401, "unauthorized", "Missing key."),
    );
    const client = createClient({ baseUrl: "https://api.example.test/api/v1", fetch });
    await client.creators.list();
    expect(requests[0]?.headers.has("Authorization")).toBe(false);
    const error = await client.streams.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as Error).message).toMatch(/^Missing key\. .*created without apiKey/);
  });

  it("throws errors that carry the response headers and request id", async () => {
    const answer = new Response(JSON.stringify({ error: { code: "not_found", message: "Stream x is not live." } }), {
      status: 404,
      headers: { "Content-Type": "application/json", "Request-Id": "req_abc", "RateLimit-Limit": "100" },
    });
    const { fetch } = scriptedFetch(answer);
    const client = createClient({ baseUrl: "https://api.example.test/api/v1", apiKey: "svc_test_k", fetch });
    const error = await client.streams.end("x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: "not_found", requestId: "req_abc" });
    expect((error as NotFoundError).headers.get("RateLimit-Limit")).toBe("100");
  });

  it("leaves requestId undefined while the server sends no Request-Id", async () => {
    const { fetch } = scriptedFetch(apiError(404, "not_found"));
    const client = createClient({ baseUrl: "https://api.example.test/api/v1", apiKey: "svc_test_k", fetch });
    const error = (await client.streams.get("x").catch((e: unknown) => e)) as NotFoundError;
    expect(error.requestId).toBeUndefined();
    expect(error.headers.get("Content-Type")).toBe("application/json");
  });

  it("puts ids in the path and the webhook id in the query", async () => {
    const { fetch, requests } = scriptedFetch(json(200, {}));
    const client = createClient({ baseUrl: "https://api.example.test/api/v1", apiKey: "svc_test_k", fetch });
    await client.streams.get("a b/c");
    await client.webhooks.delete("w-1");
    expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      "GET https://api.example.test/api/v1/streams/a%20b%2Fc",
      "DELETE https://api.example.test/api/v1/webhooks?id=w-1",
    ]);
  });

  it("exposes the raw openapi-fetch client, which returns errors instead of throwing", async () => {
    const { fetch } = scriptedFetch(apiError(404, "not_found"));
    const client = createClient({ baseUrl: "https://api.example.test/api/v1", apiKey: "svc_test_k", fetch });
    const { data, error, response } = await client.raw.GET("/streams/{id}", { params: { path: { id: "x" } } });
    expect(data).toBeUndefined();
    expect(error).toEqual({ error: { code: "not_found", message: "not_found happened" } });
    expect(response.status).toBe(404);
  });

  it.each([
    ["no options", undefined, /pass an options object/],
    ["no baseUrl", {}, /baseUrl is required, e\.g\./],
    ["a relative baseUrl", { baseUrl: "/api/v1" }, /not an absolute URL/],
    ["a non-HTTP baseUrl", { baseUrl: "ftp://example.test" }, /must start with http/],
    ["an empty apiKey", { baseUrl: "http://x.test", apiKey: "" }, /apiKey is empty/],
    ["a key with Bearer", { baseUrl: "http://x.test", apiKey: "Bearer svc_test_k" }, /without the "Bearer " prefix/],
    ["a fetch that is not a function", { baseUrl: "http://x.test", fetch: "nope" }, /fetch must be a function/],
  ])("throws a precise message on misuse: %s", (_name, options, message) => {
    expect(() => createClient(options as never)).toThrow(message);
  });

  it("rejects an empty id before sending anything", async () => {
    const { fetch, requests } = scriptedFetch(json(200, {}));
    const client = createClient({ baseUrl: "https://api.example.test/api/v1", apiKey: "svc_test_k", fetch });
    await expect(client.streams.end("")).rejects.toThrow(/streams\.end\(id\): id must be the stream_id/);
    await expect(client.webhooks.delete("")).rejects.toThrow(/webhook_id/);
    expect(requests).toHaveLength(0);
  });
});
