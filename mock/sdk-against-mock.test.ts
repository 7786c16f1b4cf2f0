/**
 * Drives every public operation of openapi.yaml through the SDK against a Prism mock of it: each
 * documented success status and each documented error code (one named example per code, chosen
 * with `Prefer: code=<status>, example=<code>`). The cases are read from openapi.yaml, so a code
 * added to the contract is covered (or fails) without editing this file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract } from "../contract/contract.ts";
import type { OperationIndex } from "../contract/operations.ts";
import {
  ApiError,
  ConcurrencyLimitError,
  ListenLimitError,
  WebhookLimitError,
  createClient,
  DatabaseError,
  InternalServerError,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  InsufficientCreditsError,
  InsufficientScopeError,
  InvalidCreatorError,
  InvalidEventsError,
  InvalidFieldsError,
  InvalidUrlError,
  LaunchFailedError,
  MissingFieldsError,
  NoMinutesError,
  NotFoundError,
  PlanRequiredError,
  RateLimitedError,
  UnauthorizedError,
  VerticalMismatchError,
  TestModeOnlyError,
  type CallOptions,
  type ErrorCode,
  type LiveStreamClient,
} from "../sdk/index.ts";
import { randomBytes } from "node:crypto";
import { startMock, type RunningMock } from "./prism.ts";

const STREAM_ID = "6f1c1f3e-7c55-4b8e-9d86-0c5a8f0a2b11";
const WEBHOOK_ID = "0b6f3d2a-4c1e-4f7a-9a55-3e2d1c0b9a87";
const DELIVERY_ID = "1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f2a1b";

/** How the SDK calls each public operation, with a request the contract accepts. */
const CALLS: Record<string, (client: LiveStreamClient, options: CallOptions) => Promise<unknown>> = {
  getDiscovery: (c, o) => c.discovery(o),
  listCreators: (c, o) => c.creators.list(o),
  createStream: (c, o) =>
    c.streams.create(
      { creator_id: "avt_Qfmm3FkkaQM0", product_name: "Trail runner 2", platform: "youtube", duration_minutes: 30 },
      o,
    ),
  listStreams: (c, o) => c.streams.list({ status: "live", limit: 10, offset: 0 }, o),
  getStream: (c, o) => c.streams.get(STREAM_ID, o),
  endStream: (c, o) => c.streams.end(STREAM_ID, o),
  getAnalytics: (c, o) => c.analytics.get({ period: "7d", stream_id: STREAM_ID }, o),
  createWebhook: (c, o) =>
    c.webhooks.create({ url: "https://hooks.example.com/live", events: ["stream.started", "stream.ended"] }, o),
  listWebhooks: (c, o) => c.webhooks.list(o),
  deleteWebhook: (c, o) => c.webhooks.delete(WEBHOOK_ID, o),
  listWebhookDeliveries: (c, o) => c.webhooks.deliveries({ stream_id: STREAM_ID }, o),
  listenTestEvents: (c, o) => firstListenedEvent(c, o),
  getWebhookDelivery: (c, o) => c.webhooks.retrieveDelivery(DELIVERY_ID, o),
  retryWebhookDelivery: (c, o) => c.webhooks.retryDelivery(DELIVERY_ID, o),
  recoverWebhookDeliveries: (c, o) =>
    c.webhooks.recover({ webhook_id: WEBHOOK_ID, since: new Date(Date.now() - 3_600_000).toISOString() }, o),
  listRequests: (c, o) => c.requests.list({ status: "4xx", method: "POST", path: "/streams", limit: 10 }, o),
  getRequest: (c, o) => c.requests.retrieve("req_5b1f0e7c2d9a4c83b6e4f1a0d7c35e92", o),
  getTestClock: (c, o) => c.testClock.get(o),
  advanceTestClock: (c, o) => c.testClock.advance(7_200, o),
};

/**
 * The first event of `webhooks.listen()`. An error answer is thrown: one reconnecting cannot fix
 * by listen() itself, one it would retry (429, 500) here, rather than retried for ever.
 */
async function firstListenedEvent(client: LiveStreamClient, options: CallOptions): Promise<unknown> {
  const stop = new AbortController();
  let failure: unknown = new Error("listen() ended without an event or an error");
  const onReconnect = ({ error, reason }: { error?: unknown; reason: string }) => {
    failure = error ?? new Error(reason);
    stop.abort();
  };
  for await (const event of client.webhooks.listen({ headers: options.headers, signal: stop.signal, onReconnect })) {
    stop.abort();
    return JSON.parse(event.body);
  }
  throw failure;
}

/** The class each wire code must come back as; typed so a new code in the contract fails compilation. */
const EXPECTED_CLASS: { [C in ErrorCode]: abstract new (...args: never[]) => ApiError<C> } = {
  missing_fields: MissingFieldsError,
  invalid_fields: InvalidFieldsError,
  invalid_creator: InvalidCreatorError,
  invalid_url: InvalidUrlError,
  invalid_events: InvalidEventsError,
  unauthorized: UnauthorizedError,
  plan_required: PlanRequiredError,
  insufficient_credits: InsufficientCreditsError,
  no_minutes: NoMinutesError,
  insufficient_scope: InsufficientScopeError,
  vertical_mismatch: VerticalMismatchError,
  test_mode_only: TestModeOnlyError,
  not_found: NotFoundError,
  idempotency_key_in_use: IdempotencyKeyInUseError,
  idempotency_key_reused: IdempotencyKeyReusedError,
  rate_limited: RateLimitedError,
  concurrency_limit: ConcurrencyLimitError,
  listen_limit: ListenLimitError,
  webhook_limit: WebhookLimitError,
  db_error: DatabaseError,
  internal_error: InternalServerError,
  launch_failed: LaunchFailedError,
};

interface Case {
  operationId: string;
  status: number;
  /** Named example to ask for; for errors it is the wire code. */
  example: string | undefined;
  /** The body Prism is expected to answer. */
  body: unknown;
}

type Json = Record<string, any>;

const contract = await loadContract();

/** Every (public operation, documented status, named example) in the contract. */
function casesFromContract(operations: OperationIndex): Case[] {
  const cases: Case[] = [];
  for (const { operationId, responses } of operations.all.filter(
    (operation) => !operation.admin && !operation.dashboard,
  )) {
    for (const [status, response] of responses) {
      if (operationId === "listenTestEvents" && status === 200) continue;
      const json = response.content?.["application/json"] as Json | undefined;
      if (!json) throw new Error(`${operationId} ${status}: no application/json content documented.`);
      const examples = json.examples as Record<string, Json> | undefined;
      if (examples) {
        for (const [name, example] of Object.entries(examples))
          cases.push({ operationId, status, example: name, body: example.value });
      } else {
        cases.push({ operationId, status, example: undefined, body: json.example });
      }
    }
  }
  return cases;
}

// The static mock asks Prism for JSON only, so it serves no event stream: GET /webhooks/listen's
// 200 is tested against the dynamic mock (below) and the server (sdk/cli-listen.test.ts).
console.log(
  "GET /webhooks/listen 200 (text/event-stream) left out of the static mock's cases: it serves no event stream; the dynamic mock's is tested below.",
);
const cases = casesFromContract(contract.operations);
const successCases = cases.filter((c) => c.status < 400);
const errorCases = cases.filter((c) => c.status >= 400);
console.log(
  `openapi.yaml documents ${cases.length} (operation, status, example) cases: ` +
    `${successCases.length} success, ${errorCases.length} error, over ${new Set(cases.map((c) => c.operationId)).size} public operations.`,
);

function prefer({ status, example }: Case): CallOptions {
  return { headers: { Prefer: example === undefined ? `code=${status}` : `code=${status}, example=${example}` } };
}

const apiKey = "svc_test_0123456789abcdefghijklmnopqrstuv";
let mock: RunningMock;

// One static mock for the whole file; the dynamic suite starts its own.
beforeAll(async () => {
  mock = await startMock();
});
afterAll(async () => {
  await mock?.stop();
});

describe("SDK against the Prism mock (static)", () => {
  let client: LiveStreamClient;

  beforeAll(() => {
    client = createClient({ baseUrl: mock.apiBase, apiKey, retry: { maxRetries: 0 } });
  });

  it("finds cases for every public operation the SDK calls, and nothing it cannot call", () => {
    expect(cases.length).toBeGreaterThan(0);
    expect(errorCases.length).toBeGreaterThan(0);
    expect(new Set(cases.map((c) => c.operationId))).toEqual(new Set(Object.keys(CALLS)));
  });

  it("documents every error code of the contract at least once", () => {
    const documented = new Set(errorCases.map((c) => c.example));
    expect([...documented].sort()).toEqual(Object.keys(EXPECTED_CLASS).sort());
  });

  it.each(successCases.map((c) => [c.operationId, c.status, c.example ?? "(single example)", c] as const))(
    "%s answers %i %s, returned as data equal to the documented example",
    async (_operationId, _status, _example, testCase) => {
      const call = CALLS[testCase.operationId];
      if (!call) throw new Error(`No SDK call for ${testCase.operationId}`);
      await expect(call(client, prefer(testCase))).resolves.toEqual(testCase.body);
    },
  );

  it.each(
    errorCases.map(
      (c) => [c.operationId, c.status, c.example, EXPECTED_CLASS[c.example as ErrorCode]?.name ?? "?", c] as const,
    ),
  )("%s answers %i %s, thrown as %s", async (_operationId, status, code, _className, testCase) => {
    const call = CALLS[testCase.operationId];
    if (!call) throw new Error(`No SDK call for ${testCase.operationId}`);
    const error = await call(client, prefer(testCase)).then(
      () => expect.fail("expected the call to throw"),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    const expected = EXPECTED_CLASS[code as ErrorCode];
    expect(expected, `example name "${code}" is not an ErrorCode`).toBeDefined();
    expect(error).toBeInstanceOf(expected);
    expect(error).toMatchObject({ status, code, raw: testCase.body });
  });
});

describe("What the static mock does, and what it cannot do", () => {
  it("returns typed data: fields read without casts", async () => {
    const client = createClient({ baseUrl: mock.apiBase, apiKey });
    const created = await client.streams.create(
      { creator_id: "avt_R5Zm31YqKDeW", product_name: "Mega Spin Slots", platform: "kick" },
      { headers: { Prefer: "code=201, example=test" } },
    );
    expect(created.status).toBe("live");
    expect(created.test).toBe(true);
    expect(created.ws_url).toBeNull();

    const detail = await client.streams.get(created.stream_id);
    expect(detail.events).toEqual([]);
    const page = await client.streams.list({ limit: 2 });
    expect(page.streams.length).toBeLessThanOrEqual(page.total);
    const analytics = await client.analytics.get({ period: "24h" });
    expect(analytics.total_streams).toBeTypeOf("number");
    const webhook = await client.webhooks.create({ url: "https://hooks.example.com/live", events: ["stream.ended"] });
    expect(webhook.secret.startsWith("whsec_")).toBe(true);
    const { creators } = await client.creators.list();
    expect(creators[0]?.id).toMatch(/^avt_/);
  });

  it("narrows err.code by subclass", async () => {
    const client = createClient({
      baseUrl: mock.apiBase,
      apiKey,
      headers: { Prefer: "code=429, example=concurrency_limit" },
    });
    const error = await client.streams
      .create({ creator_id: "avt_R5Zm31YqKDeW", product_name: "x", platform: "kick" })
      .catch((e: unknown) => e);
    if (!(error instanceof ConcurrencyLimitError))
      throw new Error(`expected ConcurrencyLimitError, got ${String(error)}`);
    const code: "concurrency_limit" = error.code;
    expect(code).toBe("concurrency_limit");
    expect(error.status).toBe(429);
  });

  it("answers 401 unauthorized when no key is sent", async () => {
    const client = createClient({ baseUrl: mock.apiBase });
    const error = await client.streams.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as Error).message).toMatch(/created without apiKey/);
    await expect(client.creators.list()).resolves.toHaveProperty("creators");
  });

  it("answers 401 for a key that is not shaped like an API key, with the server's body", async () => {
    const client = createClient({ baseUrl: mock.apiBase, apiKey: "not-a-real-key" });
    const error = await client.streams.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).raw).toEqual({
      error: { code: "unauthorized", message: "Missing or invalid API key. Send Authorization: Bearer <API_KEY>." },
    });
  });

  it("accepts any well-formed key it has never issued: it keeps no keys", async () => {
    const client = createClient({ baseUrl: mock.apiBase, apiKey: `svc_live_${"Z".repeat(32)}` });
    await expect(client.streams.list()).resolves.toHaveProperty("streams");
  });

  it("validates requests as the server does: an unknown field is invalid_fields, a live key needs duration_minutes", async () => {
    const client = createClient({ baseUrl: mock.apiBase, apiKey });
    const body = { creator_id: "avt_R5Zm31YqKDeW", product_name: "x", platform: "kick", extra: 1 } as never;
    const { error } = await client.raw.POST("/streams", { body });
    expect(error?.error.code).toBe("invalid_fields");
    expect(error?.error.message).toMatch(/extra/);
    const live = createClient({ baseUrl: mock.apiBase, apiKey: `svc_live_${"Z".repeat(32)}` });
    const missing = await live.streams
      .create({ creator_id: "avt_R5Zm31YqKDeW", product_name: "x", platform: "kick" })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(MissingFieldsError);
  });

  it("keeps no state: a stream can be ended twice and any id is found", async () => {
    const client = createClient({ baseUrl: mock.apiBase, apiKey });
    const id = "11111111-2222-4333-8444-555555555555";
    await expect(client.streams.end(id)).resolves.toHaveProperty("status", "ended");
    await expect(client.streams.end(id)).resolves.toHaveProperty("status", "ended");
    await expect(client.streams.get(id)).resolves.toHaveProperty("stream_id");
  });

  it("answers a status the operation does not document with 400 invalid_fields naming the documented ones", async () => {
    const client = createClient({ baseUrl: mock.apiBase, apiKey });
    const error = await client.streams.list({}, { headers: { Prefer: "code=418" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidFieldsError);
    expect((error as Error).message).toMatch(/Prefer: code=418 .*valid codes: 200, 401/);
  });

  it("lets listAll finish on the mock's fixed page", async () => {
    const client = createClient({ baseUrl: mock.apiBase, apiKey });
    const ids: unknown[] = [];
    for await (const stream of client.streams.listAll({ limit: 50 })) ids.push(stream.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("SDK against the dynamic mock: the server's story, per key", () => {
  let dynamicMock: RunningMock;
  const keyOf = (mode: "test" | "live") => `svc_${mode}_${randomBytes(16).toString("hex")}`;
  const client = (key: string) => createClient({ baseUrl: dynamicMock.apiBase, apiKey: key, retry: { maxRetries: 0 } });
  const start = { creator_id: "avt_Qfmm3FkkaQM0", product_name: "Trail runner 2", platform: "youtube" } as const;

  beforeAll(async () => {
    dynamicMock = await startMock({ dynamic: true });
  });
  afterAll(async () => {
    await dynamicMock?.stop();
  });

  it("lists, reads, ends (then 404) and counts what a test key started, with distinct v4 ids", async () => {
    const sdk = client(keyOf("test"));
    const created = [await sdk.streams.create(start), await sdk.streams.create(start)];
    const ids = created.map((stream) => stream.stream_id);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(created[0]).toMatchObject({ status: "live", test: true, ws_url: null, viewer_token: null });
    expect((await sdk.streams.list()).streams.map((stream) => stream.id)).toEqual([...ids].reverse());
    expect(await sdk.streams.get(ids[0]!)).toMatchObject({ stream_id: ids[0], status: "live" });
    const ended = await sdk.streams.end(ids[0]!);
    expect(ended.status).toBe("ended");
    await expect(sdk.streams.end(ids[0]!)).rejects.toBeInstanceOf(NotFoundError);
    expect(await sdk.streams.get(ids[0]!)).toMatchObject({ status: "ended", ended_at: ended.ended_at });
    const analytics = await sdk.analytics.get({ period: "24h" });
    expect(analytics.total_streams).toBe(2);
    expect(analytics.streams.map((stream) => stream.id).sort()).toEqual([...ids].sort());
    await expect(sdk.streams.get("11111111-2222-4333-8444-555555555555")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("keeps the brand's test clock: an advance stays, and a stream of 30 minutes ends at its time", async () => {
    const sdk = client(keyOf("test"));
    expect((await sdk.testClock.get()).offset_seconds).toBe(0);
    const stream = await sdk.streams.create({ ...start, duration_minutes: 30 });
    expect((await sdk.testClock.advance(31 * 60)).offset_seconds).toBe(31 * 60);
    expect((await sdk.testClock.get()).offset_seconds).toBe(31 * 60);
    const ended = await sdk.streams.get(stream.stream_id);
    expect(ended.status).toBe("ended");
    expect(Date.parse(ended.ended_at!) - Date.parse(ended.started_at!)).toBe(30 * 60_000);
  });

  it("plays live mode for a live key on simulated hosts: ws_url names the stream's room, messages name the mode", async () => {
    const sdk = client(keyOf("live"));
    await expect(sdk.streams.create(start)).rejects.toBeInstanceOf(MissingFieldsError);
    const streams = [];
    for (let i = 0; i < 3; i++) streams.push(await sdk.streams.create({ ...start, duration_minutes: 30 }));
    for (const stream of streams) {
      expect(stream).toMatchObject({ status: "preparing", agent_dispatched: true, dispatch_method: "simulated" });
      expect(stream.ws_url).toBe(`wss://rooms.simulated.invalid/${stream.room_name}`);
    }
    const refused = await sdk.streams.create({ ...start, duration_minutes: 30 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConcurrencyLimitError);
    expect((refused as ConcurrencyLimitError).message).toMatch(/active streams in live mode/);
    await expect(sdk.testClock.get()).rejects.toBeInstanceOf(TestModeOnlyError);
  });

  it("sends a test key's events to listen as they happen", async () => {
    const sdk = client(keyOf("test"));
    const stop = new AbortController();
    const heard: string[] = [];
    let connected!: () => void;
    const open = new Promise<void>((resolve) => (connected = resolve));
    const listening = (async () => {
      for await (const event of sdk.webhooks.listen({ signal: stop.signal, onConnect: connected })) {
        const body = JSON.parse(event.body) as { type: string; data: { stream_id: string } };
        heard.push(`${body.type} ${body.data.stream_id}`);
        if (heard.length === 2) stop.abort();
      }
    })();
    // The stream begins with the events after it opened.
    await open;
    const { stream_id: id } = await sdk.streams.create(start);
    await sdk.streams.end(id);
    await listening.catch((error: unknown) => {
      if (!stop.signal.aborted) throw error;
    });
    expect(heard).toEqual([`stream.started ${id}`, `stream.ended ${id}`]);
  });
});
