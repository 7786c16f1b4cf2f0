import { once } from "node:events";
import type { RequestListener } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sendRaw } from "../../conformance/fuzz/raw-http.ts";
import { startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";
import { rawExchange } from "../../testkit/raw-http.ts";
import { LARGEST_BODY_BYTES } from "./body-limit.ts";
import { createHttpServer, originForm } from "./transport.ts";

const LIMITS = { requestTimeoutMs: 1_500, headersTimeoutMs: 1_000, keepAliveTimeoutMs: 500 };

let server: TestServer;
let port: number;
let key: string;

beforeAll(async () => {
  const { requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs } = LIMITS;
  server = await startTestServer({
    engine: "pglite",
    config: {
      httpRequestTimeoutMs: requestTimeoutMs,
      httpHeadersTimeoutMs: headersTimeoutMs,
      httpKeepAliveTimeoutMs: keepAliveTimeoutMs,
    },
  });
  port = Number(new URL(server.baseUrl).port);
  ({ key } = await server.tenant());
});
afterAll(() => server.close());

/** Writes `raw` on a fresh connection and collects everything until the server closes it. */
async function exchange(raw: string | Buffer, { end = false } = {}): Promise<{ text: string; ms: number }> {
  const { text, ms, closed } = await rawExchange(port, raw, { end, waitMs: 20_000 });
  if (!closed) throw new Error(`the server did not close the connection within 20 s; it sent:\n${text}`);
  return { text, ms };
}

function parse(text: string): { status: number; headers: string; body: any } {
  const [head = "", body = ""] = text.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), headers: head, body: body ? JSON.parse(body) : undefined };
}

describe("transport limits", () => {
  it("refuses at once, in the error envelope, a request with a valid key announcing a body over the limit", async () => {
    const { text, ms } = await exchange(
      `POST /api/v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n{"url":`,
    );
    const answer = parse(text);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: { code: "invalid_fields", message: "The request body is too large: at most 1048576 bytes." },
    });
    expect(answer.headers).toMatch(/\r\nConnection: close(\r\n|$)/);
    expect(answer.headers).toMatch(/\r\nRequest-Id: req_[0-9a-f]{32}(\r\n|$)/);
    expect(ms).toBeLessThan(LIMITS.requestTimeoutMs);
  });

  it("cuts off a request with a valid key whose announced body never arrives after the request time-out, in the error envelope", async () => {
    const { text, ms } = await exchange(
      `POST /api/v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 500000\r\n\r\n{"url":`,
    );
    const answer = parse(text);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: {
        code: "invalid_fields",
        message: expect.stringMatching(
          /did not arrive in full within the server's time-out .*1500 ms for the whole request/,
        ),
      },
    });
    expect(answer.headers).toMatch(/\r\nConnection: close(\r\n|$)/);
    expect(answer.headers).toMatch(/\r\nRequest-Id: req_[0-9a-f]{32}(\r\n|$)/);
    expect(ms).toBeGreaterThanOrEqual(LIMITS.requestTimeoutMs - 100);
    expect(ms).toBeLessThan(LIMITS.requestTimeoutMs + 2_500);
  });

  it("cuts off headers that never end after the header time-out", async () => {
    const { text, ms } = await exchange("GET /api/v1/ HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    expect(parse(text)).toMatchObject({ status: 400, body: { error: { code: "invalid_fields" } } });
    expect(ms).toBeLessThan(LIMITS.headersTimeoutMs + 2_500);
  });

  it("closes an idle keep-alive connection after the keep-alive time-out", async () => {
    const { text, ms } = await exchange("GET /api/v1/ HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(parse(text).status).toBe(200);
    expect(ms).toBeGreaterThanOrEqual(LIMITS.keepAliveTimeoutMs - 100);
    expect(ms).toBeLessThan(LIMITS.keepAliveTimeoutMs + 2_500);
  });
});

describe("requests Node's parser rejects are answered 400 invalid_fields in the error envelope", () => {
  it.each([
    [
      "a NUL in the request line",
      Buffer.from("GET /api/v1/\u0000 HTTP/1.1\r\nHost: x\r\n\r\n", "latin1"),
      /Malformed HTTP request/,
    ],
    [
      "raw non-ASCII in the request line",
      Buffer.concat([
        Buffer.from("GET /api/v1/"),
        Buffer.from([0xc3, 0xa9]),
        Buffer.from(" HTTP/1.1\r\nHost: x\r\n\r\n"),
      ]),
      /Malformed HTTP request/,
    ],
    [
      "a header name with a space",
      "GET /api/v1/ HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n",
      /Malformed HTTP request/,
    ],
    [
      "headers over 16 KB",
      `GET /api/v1/ HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(17_000)}\r\n\r\n`,
      /headers are too large/,
    ],
  ])("%s", async (_name, raw, message) => {
    const { text } = await exchange(raw);
    const answer = parse(text);
    expect(answer.status).toBe(400);
    expect(answer.headers).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer.headers).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
    expect(answer.body).toEqual({ error: { code: "invalid_fields", message: expect.stringMatching(message) } });
  });
});

describe("a malformed request pipelined after a good one", () => {
  it("answers the good one first (it was acted on), then refuses the other in the envelope", async () => {
    const body = JSON.stringify(streamBody());
    const head = `POST /api/v1/streams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const { responses, closed } = await sendRaw(
      port,
      {
        method: "POST",
        target: "/api/v1/streams",
        version: "HTTP/1.1",
        headers: [],
        body: Buffer.alloc(0),
        raw: Buffer.from(`${head}${body}NOT-A-REQUEST\r\n\r\n`),
      },
      { deadlineMs: 5_000, untilClose: true },
    );
    expect(responses.map((response) => response.status)).toEqual([201, 400]);
    const created = JSON.parse(responses[0]!.text);
    expect((await server.call("GET", `/api/v1/streams/${created.stream_id}`, { key })).status).toBe(200);
    expect(JSON.parse(responses[1]!.text)).toEqual({
      error: { code: "invalid_fields", message: "Malformed HTTP request (HPE_INVALID_METHOD)." },
    });
    expect(closed).toBe(true);
  });
});

describe("request-targets are read in origin-form", () => {
  it.each([
    ["the absolute-form, which a server must accept", (origin: string) => `${origin}/api/v1/creators`],
    ["the absolute-form with a query", (origin: string) => `${origin}/api/v1/creators?x=1`],
    ["a fragment, dropped", () => "/api/v1/creators#top"],
  ])("%s", async (_name, target) => {
    const { responses } = await sendRaw(
      port,
      {
        method: "GET",
        target: target(`http://127.0.0.1:${port}`),
        version: "HTTP/1.1",
        headers: [["Host", "x"]],
        body: Buffer.alloc(0),
      },
      { deadlineMs: 5_000 },
    );
    expect(responses[0]?.status).toBe(200);
    expect(JSON.parse(responses[0]!.text).creators.length).toBeGreaterThan(0);
  });

  it.each([
    ["http://example.com/api/v1/streams?limit=5", "/api/v1/streams?limit=5"],
    ["HTTPS://example.com", "/"],
    ["http://example.com?x=1", "/?x=1"],
    ["/api/v1/#x", "/api/v1/"],
    ["*", "*"],
    ["127.0.0.1:443", "127.0.0.1:443"],
  ])("originForm(%s) is %s", (target, expected) => {
    expect(originForm(target)).toBe(expected);
  });
});

/** `fn` run against this transport alone, its requests answered by `handler`. */
async function withTransport(handler: RequestListener, fn: (port: number) => Promise<void>): Promise<void> {
  const http = createHttpServer(LIMITS);
  http.serve(handler);
  http.server.listen(0, "127.0.0.1");
  await once(http.server, "listening");
  try {
    await fn((http.server.address() as AddressInfo).port);
  } finally {
    await http.close(1_000);
  }
}

const LARGE_ANSWER = "x".repeat(2_000_000);
const answerLarge: RequestListener = (_req, res) => res.end(LARGE_ANSWER);

describe("a connection closed with bytes unread reads on for a moment first (a lingering close)", () => {
  it("a large answer followed by bytes that do not parse arrives whole, then the 400", () =>
    withTransport(answerLarge, async (port) => {
      const garbage = Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\n\r\n${"[".repeat(300_000)}\r\n\r\n`);
      const { responses } = await sendRaw(
        port,
        { method: "GET", target: "/", version: "HTTP/1.1", headers: [], body: Buffer.alloc(0), raw: garbage },
        { deadlineMs: 5_000, untilClose: true },
      );
      expect(responses.map((response) => [response.status, response.body.length, response.truncated])).toEqual([
        [200, LARGE_ANSWER.length, false],
        [400, expect.any(Number), false],
      ]);
    }));

  // Answered before a byte of the body is read, as a refused key or a GET with a body is.
  it.each([
    ["HTTP/1.0", "HTTP/1.0", []],
    ["Connection: close", "HTTP/1.1", [["Connection", "close"]]],
  ] as const)(
    "%s: a 2 MB answer given at once to a 900 KB body arrives whole, every time",
    (_label, version, headers) =>
      withTransport(answerLarge, async (port) => {
        const body = Buffer.alloc(900_000, "a");
        const outcomes = [];
        for (let attempt = 0; attempt < 10; attempt += 1) {
          const { responses } = await sendRaw(
            port,
            {
              method: "POST",
              target: "/",
              version,
              headers: [["Host", "x"], ["Content-Length", String(body.length)], ...headers],
              body,
            },
            { deadlineMs: 5_000, untilClose: true },
          );
          outcomes.push(responses.map((response) => [response.status, response.body.length, response.truncated]));
        }
        expect(outcomes).toEqual(Array(10).fill([[200, LARGE_ANSWER.length, false]]));
      }),
  );

  it.each([
    ["after an HTTP/1.0 request", "POST / HTTP/1.0\r\nHost: x\r\nContent-Length: 10\r\n\r\n", 10],
    [
      "after a body over the limit",
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${LARGEST_BODY_BYTES + 1}\r\n\r\n`,
      LARGEST_BODY_BYTES + 1,
    ],
  ])("serves no request sent on the connection while it lingers (%s)", async (_label, head, bodyBytes) => {
    let served = 0;
    await withTransport(
      (_req, res) => {
        served += 1;
        res.end("answered");
      },
      async (port) => {
        const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
        let received = "";
        socket.on("data", (chunk) => {
          received += chunk;
        });
        // The answer comes before the body: the connection lingers, reading the body and what follows.
        socket.write(head);
        await vi.waitFor(() => expect(received).toMatch(/answered$/), { timeout: 5_000 });
        socket.write(Buffer.alloc(bodyBytes, "a"));
        socket.end("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        await once(socket, "close");
        expect(received.match(/HTTP\/1\.1 200/g)).toHaveLength(1);
      },
    );
    expect(served).toBe(1);
  });
});
