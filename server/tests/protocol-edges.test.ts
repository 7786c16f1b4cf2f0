// Bytes no HTTP client library sends, written on real sockets: requests without a body, protocol
// edges (asterisk-form, Host, Expect, CONNECT, OPTIONS, conditional headers) and bodies over a
// route's limit. Each gets an answer the contract or docs/operators.md documents, in the error
// envelope with a Request-Id wherever it is an error, never an empty or HTML one.
import { member } from "../../testkit/dashboard-browser.ts";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract } from "../../contract/contract.ts";
import { createObservability } from "../observability/observability.ts";
import { silentLogger } from "../observability/logger.ts";
import { liveKitAgentProvider } from "../providers/livekit/provider.ts";
import {
  ADMIN_TOKEN,
  CONFIG,
  availableEngines,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";
import { parseAnswer, type RawAnswer, rawExchange } from "../../testkit/raw-http.ts";

const REQUEST_ID = /^req_[0-9a-f]{32}$/;
const METRICS_TOKEN = "metrics-token-0123456789abcdef";
const REQUEST_TIMEOUT_MS = 5_000;
const { operations } = await loadContract();

function portOf(server: TestServer): number {
  return Number(new URL(server.baseUrl).port);
}

/** `raw` sent on its own connection; the server's final answer. */
async function send(
  server: TestServer,
  raw: string | Buffer,
  options?: { end?: boolean; waitMs?: number },
): Promise<RawAnswer & { closed: boolean }> {
  const { text, closed } = await rawExchange(portOf(server), raw, options);
  return { ...parseAnswer(text), closed };
}

function expectEnvelope(answer: RawAnswer, status: number, code: string, message?: RegExp): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(answer.body).toEqual({ error: { code, message: expect.stringMatching(message ?? /./) } });
  expect(answer.headers.get("request-id")).toMatch(REQUEST_ID);
}

describe.each(availableEngines())("a JSON request without a body (%s)", (engine) => {
  let server: TestServer;
  let key: string;
  let brandId: string;
  /** The dashboard's operations are sent by a signed-in owner: its session cookie, CSRF token and Origin. */
  let dashboardHeaders: string;
  beforeAll(async () => {
    server = await startTestServer({ engine });
    ({ key, brandId } = await server.tenant());
    const owner = await member(server, brandId, "edges-owner@example.com");
    const csrf = (await owner.send("GET", "/session")).body.csrf_token as string;
    const cookies = [...owner.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    // The origin the server names as its own (PUBLIC_BASE_URL): these requests carry no usable Host.
    dashboardHeaders = `Cookie: ${cookies}\r\nX-CSRF-Token: ${csrf}\r\nOrigin: ${new URL(CONFIG.publicBaseUrl).origin}\r\n`;
  });
  afterAll(() => server?.close());

  const withBody = operations.all.filter((operation) => operation.bodyRequired);
  it("covers every operation whose body the contract requires", () => {
    expect(withBody.map((operation) => operation.operationId).sort()).toEqual(
      [
        "adminCreateBrand",
        "adminCreateKey",
        "adminRevokeKeyBySecret",
        "adminUpdateBrand",
        "adminInviteMember",
        "adminIssuePasswordReset",
        "adminClearSignInThrottle",
        "createStream",
        "createWebhook",
        "recoverWebhookDeliveries",
        "advanceTestClock",
        ...operations.all
          .filter((operation) => operation.dashboard && operation.bodyRequired)
          .map((operation) => operation.operationId),
      ].sort(),
    );
    expect(withBody.filter((operation) => operation.dashboard).length).toBeGreaterThan(10);
  });

  const forms: Array<[string, (head: string) => string]> = [
    [
      "no Content-Length nor Transfer-Encoding (curl -X POST without -d)",
      (head) => `${head} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n`,
    ],
    ["HTTP/1.0 without a body", (head) => `${head} HTTP/1.0\r\n`],
    ["Content-Length: 0", (head) => `${head} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n`],
  ];
  describe.each(forms)("sent with %s", (_form, requestLine) => {
    it.each(withBody.map((operation) => [`${operation.method} ${operation.servedPath}`, operation] as const))(
      "%s is 400 missing_fields",
      async (_name, operation) => {
        const path = operation.servedPath.replace("{mode}", "test").replace(/\{[^}]+\}/g, brandId);
        const credentials = operation.dashboard
          ? dashboardHeaders
          : `Authorization: Bearer ${operation.admin ? ADMIN_TOKEN : key}\r\n`;
        const answer = await send(
          server,
          `${requestLine(`${operation.method} ${path}`)}${credentials}Content-Type: application/json\r\n\r\n`,
        );
        expectEnvelope(answer, 400, "missing_fields", /has no body/);
      },
    );
  });

  it.each([
    ["/api/v1/streams", streamBody(), "stream_id"],
    ["/api/v1/webhooks", { url: "https://hooks.example.com/edges", events: ["stream.ended"] }, "webhook_id"],
  ])("POST %s without a body neither stores nor burns its Idempotency-Key", async (path, body, idField) => {
    const idempotencyKey = randomUUID();
    const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nIdempotency-Key: ${idempotencyKey}\r\nConnection: close\r\n`;
    expectEnvelope(await send(server, `${head}\r\n`), 400, "missing_fields");
    const stored = await server.db.query("SELECT 1 FROM idempotency_keys WHERE idempotency_key = $1", [idempotencyKey]);
    expect(stored).toEqual([]);

    const json = JSON.stringify(body);
    const first = await send(server, `${head}Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    expect(first.status).toBe(201);
    const replay = await send(server, `${head}Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body[idField]).toBe(first.body[idField]);
  });
});

describe("protocol edges", () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    const observability = createObservability({ metrics: true, logger: silentLogger() });
    // What main.ts registers, so that /readyz answers 200 (the harness runs no background jobs).
    for (const name of ["lifecycle_sweeper", "delivery_worker"] as const)
      observability.workers.track(name, { stop: async () => undefined });
    const provider = liveKitAgentProvider({
      url: "ws://127.0.0.1:9",
      apiKey: "edges-key",
      apiSecret: "edges-secret-0123456789abcdefghijklmnop",
      agentName: "edges",
      requestTimeoutMs: 500,
      checkIntervalMs: 60_000,
      preparingTimeoutMs: 300_000,
    });
    server = await startTestServer({
      engine: "pglite",
      provider,
      observability,
      config: {
        metricsToken: METRICS_TOKEN,
        httpRequestTimeoutMs: REQUEST_TIMEOUT_MS,
        httpHeadersTimeoutMs: REQUEST_TIMEOUT_MS,
      },
    });
    ({ key } = await server.tenant());
  });
  afterAll(() => server?.close());

  describe("a target that is not a path", () => {
    it.each(["GET", "OPTIONS", "POST"])("%s * is 404 not_found in the envelope", async (method) => {
      expectEnvelope(
        await send(server, `${method} * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
        404,
        "not_found",
      );
    });

    it("an absolute-form target is served as its path (RFC 9112 §3.2.2)", async () => {
      const answer = await send(
        server,
        "GET http://api.example.com/api/v1/?x=1 HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n",
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ name: "Live Stream Hosting API" });
    });
  });

  describe("Host (RFC 9112 §3.2)", () => {
    it.each([
      ["missing from an HTTP/1.1 request", "", /no Host header/],
      ["given twice", "Host: a.example\r\nHost: b.example\r\n", /more than one Host header/],
      ["given twice with one value", "Host: a.example\r\nHost: a.example\r\n", /more than one Host header/],
      ["not a host", "Host: a b\r\n", /not a host name/],
      ["a path", "Host: a.example/x\r\n", /not a host name/],
    ])("%s is 400 invalid_fields, then the connection is closed", async (_case, hostLines, message) => {
      const answer = await send(server, `GET /api/v1/ HTTP/1.1\r\n${hostLines}X-Other: 1\r\n\r\n`);
      expectEnvelope(answer, 400, "invalid_fields", message);
      expect(answer.headers.get("connection")).toBe("close");
      expect(answer.closed).toBe(true);
    });

    it("keeps a well-formed incoming X-Request-Id on the refusal", async () => {
      const answer = await send(server, "GET /api/v1/ HTTP/1.1\r\nX-Request-Id: edge-42\r\n\r\n");
      expect(answer.status).toBe(400);
      expect(answer.headers.get("request-id")).toBe("edge-42");
    });

    it.each([
      ["HTTP/1.0 without one", "GET /api/v1/ HTTP/1.0\r\n\r\n"],
      ["a name and port", "GET /api/v1/ HTTP/1.1\r\nHost: api.example.com:8080\r\nConnection: close\r\n\r\n"],
      ["an IPv6 address and port", "GET /api/v1/ HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n"],
      ["an IPv4 address", "GET /api/v1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"],
    ])("%s is served", async (_case, raw) => {
      expect((await send(server, raw)).status).toBe(200);
    });
  });

  describe("Expect", () => {
    it.each([
      ["GET /api/v1/", "bogus", 200],
      ["GET /healthz", "bogus", 200],
      ["GET /api/v1/streams", "something-else=1", 401],
    ])("%s with Expect: %s is answered as without it", async (target, expectation, status) => {
      const answer = await send(
        server,
        `${target} HTTP/1.1\r\nHost: x\r\nExpect: ${expectation}\r\nConnection: close\r\n\r\n`,
      );
      expect(answer.status).toBe(status);
      expect(answer.headers.get("request-id")).toMatch(REQUEST_ID);
      expect(answer.body).toEqual(expect.any(Object));
    });

    it("Expect: 100-continue gets 100 Continue, then the answer", async () => {
      const json = JSON.stringify(streamBody());
      const { text } = await rawExchange(
        portOf(server),
        `POST /api/v1/streams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${json.length}\r\nConnection: close\r\n\r\n${json}`,
      );
      expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
      expect(parseAnswer(text).status).toBe(201);
    });
  });

  describe("conditional headers never turn an answer into an empty 304", () => {
    const targets = ["/api/v1/", "/api/v1/creators", "/api/v1/streams", "/healthz", "/readyz", "/metrics"];
    const conditions = [
      "If-None-Match: *",
      'If-None-Match: "x", W/"y"',
      "If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT",
      "If-Match: *",
      "If-Unmodified-Since: Thu, 01 Jan 1970 00:00:00 GMT",
    ];
    it.each(targets.flatMap((target) => conditions.map((condition) => [target, condition] as const)))(
      "GET %s with %s is 200 with its body",
      async (target, condition) => {
        const token = target === "/metrics" ? METRICS_TOKEN : key;
        const answer = await send(
          server,
          `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${condition}\r\nConnection: close\r\n\r\n`,
        );
        expect(answer.status).toBe(200);
        expect(answer.bodyText.length).toBeGreaterThan(0);
        expect(answer.headers.has("etag")).toBe(false);
      },
    );
  });

  it("CONNECT is 404 not_found in the envelope, then the connection is closed", async () => {
    const answer = await send(server, "CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n");
    expectEnvelope(answer, 404, "not_found", /not a proxy/);
    expect(answer.headers.get("connection")).toBe("close");
    expect(answer.closed).toBe(true);
  });

  describe("a method a path does not serve is 404 not_found in the envelope (no CORS, no Allow)", () => {
    const cases = [
      ["OPTIONS", "/healthz"],
      ["OPTIONS", "/readyz"],
      ["OPTIONS", "/metrics"],
      ["OPTIONS", "/providers/livekit/webhook"],
      ["OPTIONS", "/docs/"],
      ["OPTIONS", "/docs/openapi.yaml"],
      ["OPTIONS", "/api/v1/streams"],
      ["TRACE", "/healthz"],
      ["POST", "/readyz"],
      ["GET", "/providers/livekit/webhook"],
      ["PUT", "/providers/livekit/webhook"],
    ];
    it.each(cases)("%s %s", async (method, path) => {
      const answer = await send(
        server,
        `${method} ${path} HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: GET\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expectEnvelope(answer, 404, "not_found");
      expect(answer.headers.has("allow")).toBe(false);
      expect(answer.headers.has("access-control-allow-origin")).toBe(false);
    });
  });

  describe("a body over a route's limit is refused at once, and the connection closed", () => {
    // The body is announced and never sent: only an answer made without reading it arrives before
    // the request time-out, whose answer says so instead.
    it.each([
      ["POST /providers/livekit/webhook", "Content-Type: application/webhook+json", 262_144],
      ["POST /api/v1/webhooks", `Authorization: Bearer ${"KEY"}\r\nContent-Type: application/json`, 1_048_576],
    ])("%s announcing a body over the limit", async (target, headers, limit) => {
      const answer = await send(
        server,
        `${target} HTTP/1.1\r\nHost: x\r\n${headers.replace("KEY", key)}\r\nContent-Length: ${limit + 1}\r\n\r\n{"a":`,
      );
      expectEnvelope(
        answer,
        400,
        "invalid_fields",
        new RegExp(`^The request body is too large: at most ${limit} bytes\\.$`),
      );
      expect(answer.closed).toBe(true);
    });

    it.each([
      ["POST /providers/livekit/webhook", "Content-Type: application/webhook+json", 262_144],
      ["POST /api/v1/webhooks", "Authorization: Bearer KEY\r\nContent-Type: application/json", 1_048_576],
    ])("%s sending a chunked body past the limit, and then nothing", async (target, headers, limit) => {
      const chunk = "a".repeat(limit + 1);
      const answer = await send(
        server,
        `${target} HTTP/1.1\r\nHost: x\r\n${headers.replace("KEY", key)}\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n`,
      );
      expectEnvelope(
        answer,
        400,
        "invalid_fields",
        new RegExp(`^The request body is too large: at most ${limit} bytes\\.$`),
      );
      expect(answer.closed).toBe(true);
    });

    it.each(["/api/v1/streams", "/healthz", "/api/v1/"])(
      "GET %s announcing a large body is answered without reading it, and the connection closed",
      async (path) => {
        const answer = await send(
          server,
          `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n{{{`,
        );
        expect(answer.status).toBe(200);
        expect(answer.headers.get("connection")).toBe("close");
        expect(answer.closed).toBe(true);
      },
    );

    it("GET /api/v1/streams with a malformed JSON body is answered as without it (400 is no answer of the operation)", async () => {
      const answer = await send(
        server,
        `GET /api/v1/streams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{{{`,
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ streams: expect.any(Array) });
    });
  });
});
