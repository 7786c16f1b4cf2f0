// RateLimit-* on every answer to a request with a valid key, Request-Id on every response; on
// both engines (PGlite counts brands in memory, PostgreSQL in the database).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../sdk/client.ts";
import { NotFoundError, RateLimitedError, UnauthorizedError } from "../../sdk/errors.ts";
import {
  ADMIN_TOKEN,
  availableEngines,
  type CallResult,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";

const RATE_LIMIT_HEADERS = ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"];

function rateLimitOf(response: CallResult) {
  return {
    limit: response.headers.get("ratelimit-limit"),
    remaining: response.headers.get("ratelimit-remaining"),
    reset: response.headers.get("ratelimit-reset"),
  };
}

function expectNoRateLimitHeaders(response: CallResult) {
  for (const name of RATE_LIMIT_HEADERS) expect(response.headers.get(name), name).toBeNull();
}

describe.each(availableEngines())("response headers on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ engine });
  });
  afterAll(() => server.close());

  describe("RateLimit-*", () => {
    it("a success carries the brand's limit, what is left of it, and the seconds until the window ends", async () => {
      const { key } = await server.tenant({ rate_limit_per_minute: 50 });
      server.clock.set(new Date("2026-11-20T12:00:15.000Z"));
      const first = await server.call("GET", "/api/v1/streams", { key });
      expect(first.status).toBe(200);
      expect(rateLimitOf(first)).toEqual({ limit: "50", remaining: "49", reset: "45" });
      server.clock.set(new Date("2026-11-20T12:00:59.500Z"));
      expect(rateLimitOf(await server.call("GET", "/api/v1/webhooks", { key }))).toEqual({
        limit: "50",
        remaining: "48",
        reset: "1",
      });
      // A new window: the count starts afresh and the whole minute is left.
      server.clock.set(new Date("2026-11-20T12:01:00.000Z"));
      expect(rateLimitOf(await server.call("GET", "/api/v1/analytics", { key }))).toEqual({
        limit: "50",
        remaining: "49",
        reset: "60",
      });
    });

    it("the 429 carries them with 0 remaining, and no Retry-After", async () => {
      const { key } = await server.tenant({ rate_limit_per_minute: 2 });
      server.clock.set(new Date("2026-11-20T12:05:20.250Z"));
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await server.call("GET", "/api/v1/streams", { key }));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429, 429]);
      expect(answers.map((answer) => rateLimitOf(answer).remaining)).toEqual(["1", "0", "0", "0"]);
      expect(answers[2]!.body.error.code).toBe("rate_limited");
      expect(rateLimitOf(answers[3]!)).toEqual({ limit: "2", remaining: "0", reset: "40" });
      for (const answer of answers) expect(answer.headers.get("retry-after")).toBeNull();
    });

    it("the errors that come after authentication carry them: 403, 402, 400, 404", async () => {
      const { id } = await server.brand({ plan: "starter" });
      server.clock.set(new Date("2026-11-20T12:10:30.000Z"));
      const readOnly = await server.key(id, { scopes: ["streams:read"] });
      const live = await server.key(id, { environment: "live" });
      const test = await server.key(id);
      const answers = [
        await server.call("POST", "/api/v1/streams", { key: readOnly.key, body: streamBody() }),
        await server.call("GET", "/api/v1/streams", { key: live.key }),
        await server.call("POST", "/api/v1/streams", { key: test.key, body: streamBody({ platform: "p".repeat(33) }) }),
        await server.call("GET", `/api/v1/streams/${randomUUID()}`, { key: test.key }),
        await server.call("DELETE", "/api/v1/webhooks", { key: test.key }),
      ];
      expect(answers.map((answer) => `${answer.status} ${answer.body.error.code}`)).toEqual([
        "403 insufficient_scope",
        "402 plan_required",
        "400 invalid_fields",
        "404 not_found",
        "400 missing_fields",
      ]);
      // Keys of one brand share its window, so the count goes on from key to key.
      expect(answers.map(rateLimitOf)).toEqual(
        ["99", "98", "97", "96", "95"].map((remaining) => ({ limit: "100", remaining, reset: "30" })),
      );
    });

    it("none on 401 (no brand is known), on GET /creators, or on GET / without a key; GET / with a key counts in the brand's window", async () => {
      const { key } = await server.tenant();
      server.clock.set(new Date("2026-11-20T12:20:00.000Z"));
      expectNoRateLimitHeaders(await server.call("GET", "/api/v1/streams"));
      expectNoRateLimitHeaders(await server.call("GET", "/api/v1/streams", { key: `svc_test_${"c".repeat(32)}` }));
      expectNoRateLimitHeaders(
        await server.call("GET", "/api/v1/streams", { headers: { authorization: "Bearer nonsense" } }),
      );
      expectNoRateLimitHeaders(await server.call("GET", "/api/v1/creators"));
      expectNoRateLimitHeaders(await server.call("GET", "/api/v1/creators", { key }));
      expectNoRateLimitHeaders(await server.call("GET", "/api/v1/"));
      expect(rateLimitOf(await server.call("GET", "/api/v1/", { key }))).toEqual({
        limit: "100",
        remaining: "99",
        reset: "60",
      });
      expect(rateLimitOf(await server.call("GET", "/api/v1/streams", { key })).remaining).toBe("98");
    });

    it("a revoked or expired key is answered 401 and counted against nobody", async () => {
      const { id } = await server.brand({ rate_limit_per_minute: 3 });
      server.clock.set(new Date("2026-11-20T12:28:00.000Z"));
      const expired = await server.key(id, { expiresAt: "2026-11-20T12:29:00.000Z" });
      server.clock.set(new Date("2026-11-20T12:30:00.000Z"));
      const good = await server.key(id);
      const revoked = await server.key(id);
      await server.call("DELETE", `/admin/v1/keys/${revoked.keyId}`, { key: ADMIN_TOKEN });
      for (let i = 0; i < 5; i++) {
        expect((await server.call("GET", "/api/v1/streams", { key: revoked.key })).status).toBe(401);
        expect((await server.call("GET", "/api/v1/streams", { key: expired.key })).status).toBe(401);
      }
      expect(rateLimitOf(await server.call("GET", "/api/v1/streams", { key: good.key })).remaining).toBe("2");
    });
  });

  describe("Cache-Control", () => {
    it("is no-store on every answer of the public and operator APIs, secrets and errors included", async () => {
      const { key, brandId } = await server.tenant();
      const answers = {
        "POST /admin/v1/keys": await server.call("POST", "/admin/v1/keys", {
          key: ADMIN_TOKEN,
          body: { brand_id: brandId, name: "cached?", environment: "test", scopes: ["streams:read"] },
        }),
        "GET /admin/v1/brands/{id}": await server.call("GET", `/admin/v1/brands/${brandId}`, { key: ADMIN_TOKEN }),
        "GET /admin/v1/brands/{id} unauthenticated": await server.call("GET", `/admin/v1/brands/${brandId}`),
        "POST /webhooks": await server.call("POST", "/api/v1/webhooks", {
          key,
          body: { url: "https://hooks.example.com/live", events: ["stream.started"] },
        }),
        "GET /streams": await server.call("GET", "/api/v1/streams", { key }),
        "GET /streams unauthenticated": await server.call("GET", "/api/v1/streams"),
        "POST /streams bad JSON": await server.call("POST", "/api/v1/streams", { key, rawBody: "{not json" }),
        "GET /nothing-here": await server.call("GET", "/api/v1/nothing-here", { key }),
        "GET /": await server.call("GET", "/api/v1/", { key }),
      };
      expect(answers["POST /admin/v1/keys"].status).toBe(201);
      expect(answers["POST /webhooks"].status).toBe(201);
      for (const [name, answer] of Object.entries(answers))
        expect(answer.headers.get("cache-control"), name).toBe("no-store");
      // The public catalogue keeps the max-age the contract states for it.
      expect((await server.call("GET", "/api/v1/creators")).headers.get("cache-control")).toBe("public, max-age=60");
    });
  });

  describe("Request-Id", () => {
    it("is on every kind of response: API success and errors, 404s inside and outside the API, docs, operator API", async () => {
      const { key } = await server.tenant();
      server.clock.set(new Date("2026-11-20T12:40:00.000Z"));
      const answers = [
        await server.call("GET", "/api/v1/streams", { key }),
        await server.call("GET", "/api/v1/creators"),
        await server.call("GET", "/api/v1/"),
        await server.call("GET", "/api/v1/streams"),
        await server.call("POST", "/api/v1/streams", { key, rawBody: "{not json" }),
        await server.call("GET", "/api/v1/nothing-here", { key }),
        await server.call("GET", "/api/v1/streams/", { key }),
        await server.call("GET", "/not-the-api"),
        await server.call("GET", "/docs/openapi.yaml"),
        await server.call("HEAD", "/api/v1/creators"),
        await server.call("GET", "/admin/v1/brands/6f1c2a52-0000-4000-8000-000000000001", { key: ADMIN_TOKEN }),
        await server.call("GET", "/admin/v1/brands/6f1c2a52-0000-4000-8000-000000000001"),
      ];
      expect(answers.map((answer) => answer.status)).toEqual([
        200, 200, 200, 401, 400, 404, 404, 404, 200, 200, 404, 401,
      ]);
      const ids = answers.map((answer) => answer.headers.get("request-id"));
      for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it("keeps a well-formed incoming X-Request-Id and replaces a malformed one", async () => {
      const { key } = await server.tenant();
      const sent = async (value: string) =>
        (await server.call("GET", "/api/v1/streams", { key, headers: { "x-request-id": value } })).headers.get(
          "request-id",
        );
      for (const wellFormed of ["a", "trace-7f3a.9:B_c", "x".repeat(128)])
        expect(await sent(wellFormed)).toBe(wellFormed);
      for (const malformed of ["", "x".repeat(129), "has space", "semi;colon", "ünïcode", "a,b"])
        expect(await sent(malformed)).toMatch(/^req_[0-9a-f]{32}$/);
      // Also on a 401, which knows no brand.
      expect(
        (await server.call("GET", "/api/v1/streams", { headers: { "x-request-id": "edge-42" } })).headers.get(
          "request-id",
        ),
      ).toBe("edge-42");
    });

    it("reaches the SDK: an ApiError from this server has requestId, and its headers the rate limit", async () => {
      const { key } = await server.tenant({ rate_limit_per_minute: 1 });
      server.clock.set(new Date("2026-11-20T12:50:50.000Z"));
      const baseUrl = `${server.baseUrl}/api/v1`;
      const noRetry = { maxRetries: 0 };
      const api = createClient({ baseUrl, apiKey: key, retry: noRetry });
      const notFound = await api.streams.get(randomUUID()).catch((error: unknown) => error);
      expect(notFound).toBeInstanceOf(NotFoundError);
      expect((notFound as NotFoundError).requestId).toMatch(/^req_[0-9a-f]{32}$/);
      const limited = await api.streams.list().catch((error: unknown) => error);
      expect(limited).toBeInstanceOf(RateLimitedError);
      expect((limited as RateLimitedError).headers.get("RateLimit-Reset")).toBe("10");
      const traced = createClient({ baseUrl, headers: { "X-Request-Id": "support-ticket-1234" }, retry: noRetry });
      const unauthorized = await traced.streams.list().catch((error: unknown) => error);
      expect(unauthorized).toBeInstanceOf(UnauthorizedError);
      expect((unauthorized as UnauthorizedError).requestId).toBe("support-ticket-1234");
    });

    it("lets the SDK retry rate_limited after the RateLimit-Reset seconds, into the next window", async () => {
      const { key } = await server.tenant({ rate_limit_per_minute: 1 });
      server.clock.set(new Date("2026-11-20T12:55:52.000Z"));
      const waits: number[] = [];
      const api = createClient({
        baseUrl: `${server.baseUrl}/api/v1`,
        apiKey: key,
        // The server's clock, not the test machine's, decides the window: the SDK must go by the header.
        retry: {
          random: () => 0,
          now: () => Date.UTC(2026, 0, 1, 0, 0, 1),
          sleep: async (ms) => {
            waits.push(ms);
            server.clock.advance(ms);
          },
        },
      });
      await api.streams.list();
      await expect(api.streams.list()).resolves.toMatchObject({ total: 0 });
      expect(waits).toEqual([8_000]);
    });
  });
});
