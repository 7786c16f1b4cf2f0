// Idempotency-Key on POST /streams, POST /webhooks and DELETE /streams/{id} (README:
// Idempotency), on both engines: replay, mismatch, in-flight, a crashed or overtaken attempt,
// expiry, what is stored and what is not, and the SDK retrying a POST or an end whose first answer
// was lost on the way back.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../sdk/index.ts";
import type { AgentProvider } from "../providers/agent-provider.ts";
import { simulatedAgentProvider } from "../providers/simulated-agent.ts";
import {
  canonicalJson,
  claimIdempotencyKeyFor,
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_TTL_MS,
  recordResource,
} from "../services/idempotency.ts";
import { failingDatabase } from "../../testkit/failing-database.ts";
import {
  availableEngines,
  type Engine,
  freshDatabase,
  startTestServer,
  streamBody,
  type TestServer,
} from "../../testkit/harness.ts";

const HOOK = { url: "https://hooks.example.com/live", events: ["stream.started", "stream.ended"] };

/** A simulated provider whose launches wait until `open()`: a live-key start held in flight. */
function gatedProvider() {
  const simulated = simulatedAgentProvider({ joinAfterMs: 3_000 });
  let open!: () => void;
  let gate = new Promise<void>((resolve) => (open = resolve));
  let launched!: () => void;
  let started = new Promise<void>((resolve) => (launched = resolve));
  const provider: AgentProvider = {
    ...simulated,
    async launch(request) {
      launched();
      await gate;
      return simulated.launch(request);
    },
  };
  return {
    provider,
    /** Resolves once a launch is waiting. */
    started: () => started,
    open: () => open(),
    /** Closes the gate again for the next start. */
    reset() {
      gate = new Promise<void>((resolve) => (open = resolve));
      started = new Promise<void>((resolve) => (launched = resolve));
    },
  };
}

const withKey = (idempotencyKey: string, headers: Record<string, string> = {}) => ({
  "idempotency-key": idempotencyKey,
  ...headers,
});

describe("canonicalJson", () => {
  it("sorts object keys at every depth and keeps array order, so only the content decides", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { f: 1, e: 2 }], c: "x" } })).toBe(
      '{"a":{"c":"x","d":[3,{"e":2,"f":1}]},"b":1}',
    );
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
  });
});

describe.each(availableEngines())("Idempotency-Key on %s", (engine: Engine) => {
  let server: TestServer;
  let gated: ReturnType<typeof gatedProvider>;
  let failOn: (statements: RegExp | null) => void;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshDatabase(engine);
    drop = fresh.drop;
    const failing = failingDatabase(fresh.db);
    failOn = failing.failOn;
    gated = gatedProvider();
    server = await startTestServer({ engine, database: failing.db, provider: gated.provider });
  }, 60_000);
  afterAll(async () => {
    await server.close();
    await drop();
  });

  const streamsOf = async (key: string) =>
    (await server.call("GET", "/api/v1/streams?limit=100", { key })).body as {
      streams: Array<{ id: string; status: string }>;
      total: number;
    };

  describe("replay", () => {
    it("the same key and body within 24 h answer the first 201 again, with Idempotent-Replayed: true, and start no second stream", async () => {
      const { key } = await server.tenant();
      const idempotencyKey = randomUUID();
      const first = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect(first.status).toBe(201);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      server.clock.advance(IDEMPOTENCY_TTL_MS - 1);
      // The same content with its fields in another order is the same request.
      const reordered = Object.fromEntries(Object.entries(streamBody()).reverse());
      const again = await server.call("POST", "/api/v1/streams", {
        key,
        rawBody: JSON.stringify(reordered),
        headers: withKey(idempotencyKey),
      });
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.text).toBe(first.text);
      expect(again.headers.get("request-id")).not.toBe(first.headers.get("request-id"));
      expect((await streamsOf(key)).total).toBe(1);
    });

    it("POST /webhooks replays its 201, secret included, and registers one webhook", async () => {
      const { key } = await server.tenant();
      const idempotencyKey = randomUUID();
      const first = await server.call("POST", "/api/v1/webhooks", {
        key,
        body: HOOK,
        headers: withKey(idempotencyKey),
      });
      const again = await server.call("POST", "/api/v1/webhooks", {
        key,
        body: HOOK,
        headers: withKey(idempotencyKey),
      });
      expect([first.status, again.status]).toEqual([201, 201]);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect((await server.call("GET", "/api/v1/webhooks", { key })).body.webhooks).toHaveLength(1);
    });

    it("replays the endpoint's own refusals: concurrency_limit stays the answer of its key after a stream ends", async () => {
      const { brandId, key } = await server.tenant({ max_active_streams: 1 });
      const running = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
      const idempotencyKey = randomUUID();
      const refused = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect([refused.status, refused.body.error.code]).toEqual([429, "concurrency_limit"]);
      expect((await server.call("DELETE", `/api/v1/streams/${running.body.stream_id}`, { key })).status).toBe(200);
      const replayed = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect([replayed.status, replayed.text, replayed.headers.get("idempotent-replayed")]).toEqual([
        429,
        refused.text,
        "true",
      ]);
      // A new key is a new attempt.
      expect(
        (await server.call("POST", "/api/v1/streams", { key, body: streamBody(), headers: withKey(randomUUID()) }))
          .status,
      ).toBe(201);
      expect(brandId).toBeDefined();
    });

    it("replays 502 launch_failed without launching again: one stream, in error", async () => {
      const { key } = await server.tenant();
      const idempotencyKey = randomUUID();
      const body = streamBody({ product_name: "Slots sim:launch-failed" });
      const first = await server.call("POST", "/api/v1/streams", { key, body, headers: withKey(idempotencyKey) });
      const again = await server.call("POST", "/api/v1/streams", { key, body, headers: withKey(idempotencyKey) });
      expect([first.status, first.body.error.code]).toEqual([502, "launch_failed"]);
      expect([again.status, again.text, again.headers.get("idempotent-replayed")]).toEqual([502, first.text, "true"]);
      const { streams } = await streamsOf(key);
      expect(streams.map((stream) => stream.status)).toEqual(["error"]);
    });

    it("scopes keys to the API key: another key of the same brand using the same value starts its own stream", async () => {
      const { brandId, key } = await server.tenant();
      const other = (await server.key(brandId)).key;
      const idempotencyKey = randomUUID();
      const mine = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      const theirs = await server.call("POST", "/api/v1/streams", {
        key: other,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect([mine.status, theirs.status]).toEqual([201, 201]);
      expect(theirs.headers.get("idempotent-replayed")).toBeNull();
      expect(theirs.body.stream_id).not.toBe(mine.body.stream_id);
    });
  });

  describe("mismatch", () => {
    it("the same key with another body, or on the other operation, is 422 idempotency_key_reused and does nothing", async () => {
      const { key } = await server.tenant();
      const idempotencyKey = randomUUID();
      expect(
        (await server.call("POST", "/api/v1/streams", { key, body: streamBody(), headers: withKey(idempotencyKey) }))
          .status,
      ).toBe(201);
      const otherBody = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody({ product_name: "Another drop" }),
        headers: withKey(idempotencyKey),
      });
      expect(otherBody.status).toBe(422);
      expect(otherBody.body.error.code).toBe("idempotency_key_reused");
      expect(otherBody.body.error.message).toMatch(/another request body/);
      expect(otherBody.headers.get("idempotent-replayed")).toBeNull();
      const otherOperation = await server.call("POST", "/api/v1/webhooks", {
        key,
        body: HOOK,
        headers: withKey(idempotencyKey),
      });
      expect([otherOperation.status, otherOperation.body.error.code]).toEqual([422, "idempotency_key_reused"]);
      expect(otherOperation.body.error.message).toMatch(/another operation \(createStream\)/);
      expect((await streamsOf(key)).total).toBe(1);
      expect((await server.call("GET", "/api/v1/webhooks", { key })).body.webhooks).toEqual([]);
    });
  });

  describe("what is not stored", () => {
    it("a request refused by validation stores nothing: the corrected request with the same key runs", async () => {
      const { key } = await server.tenant();
      const idempotencyKey = randomUUID();
      const invalid = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody({ platform: undefined }),
        headers: withKey(idempotencyKey),
      });
      expect([invalid.status, invalid.body.error.code]).toEqual([400, "missing_fields"]);
      const badUrl = await server.call("POST", "/api/v1/webhooks", {
        key,
        body: { ...HOOK, url: "https://127.0.0.1/x" },
        headers: withKey(idempotencyKey),
      });
      expect([badUrl.status, badUrl.body.error.code]).toEqual([400, "invalid_url"]);
      const valid = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect([valid.status, valid.headers.get("idempotent-replayed")]).toEqual([201, null]);
    });

    it("a key refused 401 or 403 insufficient_scope stores nothing for the key that then sends it", async () => {
      const { brandId, key } = await server.tenant();
      const readOnly = (await server.key(brandId, { scopes: ["streams:read"] })).key;
      const idempotencyKey = randomUUID();
      expect(
        (
          await server.call("POST", "/api/v1/streams", {
            key: readOnly,
            body: streamBody(),
            headers: withKey(idempotencyKey),
          })
        ).status,
      ).toBe(403);
      expect(
        (await server.call("POST", "/api/v1/streams", { body: streamBody(), headers: withKey(idempotencyKey) })).status,
      ).toBe(401);
      const [row] = await server.db.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM idempotency_keys WHERE idempotency_key = $1",
        [idempotencyKey],
      );
      expect(row!.count).toBe(0);
      expect(
        (await server.call("POST", "/api/v1/streams", { key, body: streamBody(), headers: withKey(idempotencyKey) }))
          .status,
      ).toBe(201);
    });

    it.each([
      ["empty", ""],
      ["longer than 255 characters", "k".repeat(256)],
      ["holding a space", "my key"],
      ["not ASCII", "clé-1"],
    ])("an Idempotency-Key %s is 400 invalid_fields naming the header", async (_case, value) => {
      const { key } = await server.tenant();
      const answer = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: { "idempotency-key": value },
      });
      expect([answer.status, answer.body.error.code]).toEqual([400, "invalid_fields"]);
      expect(answer.body.error.message).toMatch(/idempotency-key/i);
      expect((await streamsOf(key)).total).toBe(0);
    });

    it("500 db_error stores nothing: once the database is back, a retry with the same key starts the stream, once", async () => {
      const { key } = await server.tenant();
      const idempotencyKey = randomUUID();
      failOn(/INSERT INTO streams/);
      let failed;
      try {
        failed = await server.call("POST", "/api/v1/streams", {
          key,
          body: streamBody(),
          headers: withKey(idempotencyKey),
        });
      } finally {
        failOn(null);
      }
      expect([failed.status, failed.body.error.code]).toEqual([500, "db_error"]);
      const retried = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect([retried.status, retried.headers.get("idempotent-replayed")]).toEqual([201, null]);
      const again = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect([again.status, again.headers.get("idempotent-replayed"), again.body.stream_id]).toEqual([
        201,
        "true",
        retried.body.stream_id,
      ]);
      expect((await streamsOf(key)).total).toBe(1);
    });

    it("a 500 after the stream was created (its answer could not be written) is not stored, and the retry answers from that stream", async () => {
      const { key } = await server.tenant({ environment: "live" });
      const idempotencyKey = randomUUID();
      // The launch's own update fails: the stream exists, preparing, with no answer stored.
      failOn(/UPDATE streams SET status/);
      gated.open();
      let failed;
      try {
        failed = await server.call("POST", "/api/v1/streams", {
          key,
          body: streamBody(),
          headers: withKey(idempotencyKey),
        });
      } finally {
        failOn(null);
        gated.reset();
      }
      expect([failed.status, failed.body.error.code]).toEqual([500, "db_error"]);
      const retried = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect(retried.status).toBe(201);
      const { streams } = await streamsOf(key);
      expect(streams.map((stream) => stream.id)).toEqual([retried.body.stream_id]);
    });
  });

  describe("in flight", () => {
    it("the same key while the first request still runs is 409 idempotency_key_in_use; once it answers, its answer is replayed", async () => {
      const { key } = await server.tenant({ environment: "live" });
      const idempotencyKey = randomUUID();
      const first = server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      await gated.started();
      try {
        const busy = await server.call("POST", "/api/v1/streams", {
          key,
          body: streamBody(),
          headers: withKey(idempotencyKey),
        });
        expect([busy.status, busy.body.error.code, busy.headers.get("idempotent-replayed")]).toEqual([
          409,
          "idempotency_key_in_use",
          null,
        ]);
        // Another body is a mismatch even while the first runs.
        const other = await server.call("POST", "/api/v1/streams", {
          key,
          body: streamBody({ product_name: "Other" }),
          headers: withKey(idempotencyKey),
        });
        expect(other.status).toBe(422);
      } finally {
        gated.open();
      }
      const answered = await first;
      gated.reset();
      expect(answered.status).toBe(201);
      const replayed = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect([replayed.status, replayed.text, replayed.headers.get("idempotent-replayed")]).toEqual([
        201,
        answered.text,
        "true",
      ]);
      expect((await streamsOf(key)).total).toBe(1);
    });

    it("a request that outlives its lock is taken over by a retry, which answers from the stream it created: one stream", async () => {
      const { key } = await server.tenant({ environment: "live" });
      const idempotencyKey = randomUUID();
      const slow = server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      await gated.started();
      let takeover;
      try {
        server.clock.advance(IDEMPOTENCY_LOCK_MS);
        takeover = await server.call("POST", "/api/v1/streams", {
          key,
          body: streamBody(),
          headers: withKey(idempotencyKey),
        });
      } finally {
        gated.open();
      }
      const slowAnswer = await slow;
      gated.reset();
      expect(takeover.status).toBe(201);
      expect(takeover.body.stream_id).toBe(slowAnswer.body.stream_id);
      expect((await streamsOf(key)).streams.map((stream) => stream.id)).toEqual([slowAnswer.body.stream_id]);
      const replayed = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect([replayed.status, replayed.body.stream_id, replayed.headers.get("idempotent-replayed")]).toEqual([
        201,
        slowAnswer.body.stream_id,
        "true",
      ]);
    });

    it("a process that died holding a key before creating anything leaves it in use only until its lock lapses; the retry then starts the stream", async () => {
      const { brandId } = await server.tenant();
      const { key, keyId } = await server.key(brandId);
      const idempotencyKey = randomUUID();
      // The dead attempt: its claim is all it left behind.
      await claimIdempotencyKeyFor(server.db, {
        apiKeyId: keyId,
        key: idempotencyKey,
        operation: "createStream",
        request: streamBody(),
        now: server.clock(),
      });
      const busy = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect(busy.status).toBe(409);
      server.clock.advance(IDEMPOTENCY_LOCK_MS);
      const retried = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      expect([retried.status, retried.headers.get("idempotent-replayed")]).toEqual([201, null]);
      expect((await streamsOf(key)).total).toBe(1);
    });

    it("an attempt overtaken before it created anything cannot create: its transaction is refused and rolled back", async () => {
      const { brandId } = await server.tenant();
      const { keyId } = await server.key(brandId);
      const idempotencyKey = randomUUID();
      const input = { apiKeyId: keyId, key: idempotencyKey, operation: "createStream" as const, request: streamBody() };
      const slow = await claimIdempotencyKeyFor(server.db, { ...input, now: server.clock() });
      const later = new Date(server.clock().getTime() + IDEMPOTENCY_LOCK_MS);
      const takeover = await claimIdempotencyKeyFor(server.db, { ...input, now: later });
      expect([slow.kind, takeover.kind]).toEqual(["run", "run"]);
      if (slow.kind !== "run" || takeover.kind !== "run") return;
      const streamId = randomUUID();
      await expect(server.db.transaction((tx) => recordResource(tx, slow.lock, streamId))).rejects.toMatchObject({
        code: "idempotency_key_in_use",
      });
      await server.db.transaction((tx) => recordResource(tx, takeover.lock, streamId));
      const [row] = await server.db.query<{ resource_id: string }>(
        "SELECT resource_id FROM idempotency_keys WHERE api_key_id = $1 AND idempotency_key = $2",
        [keyId, idempotencyKey],
      );
      expect(row!.resource_id).toBe(streamId);
    });
  });

  describe("expiry", () => {
    it("after 24 hours the key is free: another body starts a new stream, and the sweeper deletes records past their 24 hours", async () => {
      const { key } = await server.tenant();
      const idempotencyKey = randomUUID();
      const sweptKey = randomUUID();
      const first = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody(),
        headers: withKey(idempotencyKey),
      });
      await server.call("POST", "/api/v1/webhooks", { key, body: HOOK, headers: withKey(sweptKey) });
      expect((await server.call("DELETE", `/api/v1/streams/${first.body.stream_id}`, { key })).status).toBe(200);
      server.clock.advance(IDEMPOTENCY_TTL_MS);
      const fresh = await server.call("POST", "/api/v1/streams", {
        key,
        body: streamBody({ product_name: "Next day" }),
        headers: withKey(idempotencyKey),
      });
      expect([fresh.status, fresh.headers.get("idempotent-replayed")]).toEqual([201, null]);
      expect(fresh.body.stream_id).not.toBe(first.body.stream_id);

      const stored = async (value: string) =>
        (
          await server.db.query<{ count: number }>(
            "SELECT count(*)::int AS count FROM idempotency_keys WHERE idempotency_key = $1",
            [value],
          )
        )[0]!.count;
      expect(await stored(sweptKey)).toBe(1);
      await server.sweep();
      expect(await stored(sweptKey)).toBe(0);
      // The renewed key has 24 hours of its own.
      expect(await stored(idempotencyKey)).toBe(1);
      const again = await server.call("POST", "/api/v1/webhooks", { key, body: HOOK, headers: withKey(sweptKey) });
      expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([201, null]);
    });
  });

  describe("DELETE /streams/{id}", () => {
    const end = (key: string, streamId: string, idempotencyKey?: string) =>
      server.call("DELETE", `/api/v1/streams/${streamId}`, {
        key,
        ...(idempotencyKey ? { headers: withKey(idempotencyKey) } : {}),
      });
    const started = async (key: string) =>
      (await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).body.stream_id as string;

    it("without a key, a second end is 404, as the spec says", async () => {
      const { key } = await server.tenant();
      const streamId = await started(key);
      const first = await end(key, streamId);
      const second = await end(key, streamId);
      expect([first.status, first.body.status]).toEqual([200, "ended"]);
      expect([second.status, second.body.error.code, second.headers.get("idempotent-replayed")]).toEqual([
        404,
        "not_found",
        null,
      ]);
      expect(second.body.error.message).toMatch(/is not live \(status ended\)/);
    });

    it("with the same key, the second end replays the first 200 (Idempotent-Replayed: true); without it, still 404", async () => {
      const { key } = await server.tenant();
      const streamId = await started(key);
      const idempotencyKey = randomUUID();
      const first = await end(key, streamId, idempotencyKey);
      expect([first.status, first.headers.get("idempotent-replayed")]).toEqual([200, null]);
      server.clock.advance(60_000);
      const again = await end(key, streamId, idempotencyKey);
      expect([again.status, again.text, again.headers.get("idempotent-replayed")]).toEqual([200, first.text, "true"]);
      expect((await end(key, streamId)).status).toBe(404);
      expect((await end(key, streamId, randomUUID())).status).toBe(404);
      // Ended once: one stream.ended event.
      const [row] = await server.db.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM webhook_events WHERE stream_id = $1 AND type = 'stream.ended'",
        [streamId],
      );
      expect(row!.count).toBe(1);
    });

    it("replays the stream's own 404 (not live, or unknown) as the key's answer", async () => {
      const { key } = await server.tenant();
      const streamId = await started(key);
      expect((await end(key, streamId)).status).toBe(200);
      const idempotencyKey = randomUUID();
      const refused = await end(key, streamId, idempotencyKey);
      const replayed = await end(key, streamId, idempotencyKey);
      expect([refused.status, replayed.status, replayed.text, replayed.headers.get("idempotent-replayed")]).toEqual([
        404,
        404,
        refused.text,
        "true",
      ]);
    });

    it("the key for another stream, or first used to start one, is 422 idempotency_key_reused and ends nothing", async () => {
      const { key } = await server.tenant();
      const [one, other] = [await started(key), await started(key)];
      const idempotencyKey = randomUUID();
      expect((await end(key, one, idempotencyKey)).status).toBe(200);
      const reused = await end(key, other, idempotencyKey);
      expect([reused.status, reused.body.error.code]).toEqual([422, "idempotency_key_reused"]);
      expect(reused.body.error.message).toMatch(/already used with another stream/);
      const startKey = randomUUID();
      expect(
        (await server.call("POST", "/api/v1/streams", { key, body: streamBody(), headers: withKey(startKey) })).status,
      ).toBe(201);
      const crossed = await end(key, other, startKey);
      expect([crossed.status, crossed.body.error.message]).toEqual([
        422,
        expect.stringMatching(/another operation \(createStream\)/),
      ]);
      expect((await server.call("GET", `/api/v1/streams/${other}`, { key })).body.status).toBe("live");
    });

    it("an id that is not a UUID is 404 before the key is looked at: nothing stored, the key then ends a stream", async () => {
      const { key } = await server.tenant();
      const streamId = await started(key);
      const idempotencyKey = randomUUID();
      const malformed = await end(key, "<string>", idempotencyKey);
      expect([malformed.status, malformed.body.error.code]).toEqual([404, "not_found"]);
      const [row] = await server.db.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM idempotency_keys WHERE idempotency_key = $1",
        [idempotencyKey],
      );
      expect(row!.count).toBe(0);
      expect((await end(key, streamId, idempotencyKey)).status).toBe(200);
    });

    it("a malformed key is 400 invalid_fields naming the header, and ends nothing", async () => {
      const { key } = await server.tenant();
      const streamId = await started(key);
      const answer = await end(key, streamId, "my key");
      expect([answer.status, answer.body.error.code]).toEqual([400, "invalid_fields"]);
      expect(answer.body.error.message).toMatch(/idempotency-key/i);
      expect((await server.call("GET", `/api/v1/streams/${streamId}`, { key })).body.status).toBe("live");
    });

    it("a key held by an attempt still running is 409 idempotency_key_in_use, and ends the stream once its lock lapses", async () => {
      const { brandId } = await server.tenant();
      const { key, keyId } = await server.key(brandId);
      const streamId = await started(key);
      const idempotencyKey = randomUUID();
      await claimIdempotencyKeyFor(server.db, {
        apiKeyId: keyId,
        key: idempotencyKey,
        operation: "endStream",
        request: { stream_id: streamId },
        now: server.clock(),
      });
      const busy = await end(key, streamId, idempotencyKey);
      expect([busy.status, busy.body.error.code]).toEqual([409, "idempotency_key_in_use"]);
      expect((await server.call("GET", `/api/v1/streams/${streamId}`, { key })).body.status).toBe("live");
      server.clock.advance(IDEMPOTENCY_LOCK_MS);
      const retried = await end(key, streamId, idempotencyKey);
      expect([retried.status, retried.body.status, retried.headers.get("idempotent-replayed")]).toEqual([
        200,
        "ended",
        null,
      ]);
    });

    it("a server-side failure (500 db_error) is not stored: a retry with the same key ends the stream", async () => {
      const { key } = await server.tenant();
      const streamId = await started(key);
      const idempotencyKey = randomUUID();
      failOn(/UPDATE streams SET status/);
      let failed;
      try {
        failed = await end(key, streamId, idempotencyKey);
      } finally {
        failOn(null);
      }
      expect([failed.status, failed.body.error.code]).toEqual([500, "db_error"]);
      const retried = await end(key, streamId, idempotencyKey);
      expect([retried.status, retried.body.status, retried.headers.get("idempotent-replayed")]).toEqual([
        200,
        "ended",
        null,
      ]);
    });

    it("an end whose answer could not be stored answers 200 all the same, and a retry once the lock lapses answers from the ended stream", async () => {
      const { key } = await server.tenant();
      const streamId = await started(key);
      const idempotencyKey = randomUUID();
      failOn(/SET response_status/);
      let first;
      try {
        first = await end(key, streamId, idempotencyKey);
      } finally {
        failOn(null);
      }
      expect([first.status, first.body.status]).toEqual([200, "ended"]);
      expect((await end(key, streamId, idempotencyKey)).status).toBe(409);
      server.clock.advance(IDEMPOTENCY_LOCK_MS);
      const resumed = await end(key, streamId, idempotencyKey);
      expect([resumed.status, resumed.body]).toEqual([200, first.body]);
    });
  });

  describe("the SDK", () => {
    /** A proxy in front of the server that, once, lets a request of `method` reach the server and cuts the connection instead of answering. */
    async function droppingProxy(upstream: string, method = "POST") {
      let dropped = 0;
      const proxy: Server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", async () => {
          const headers = Object.fromEntries(
            Object.entries(req.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name)),
          ) as Record<string, string>;
          const answer = await fetch(upstream + req.url, {
            method: req.method,
            headers,
            body: req.method === "GET" ? undefined : Buffer.concat(chunks),
          });
          const text = await answer.text();
          if (req.method === method && dropped === 0) {
            dropped += 1;
            req.socket.destroy();
            return;
          }
          res
            .writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" })
            .end(text);
        });
      });
      proxy.listen(0, "127.0.0.1");
      await once(proxy, "listening");
      return {
        url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        dropped: () => dropped,
        close: () => new Promise((resolve) => proxy.close(resolve)),
      };
    }

    it("retries a POST /streams whose answer was lost after the server acted, and gets the first stream, not a second", async () => {
      const { key } = await server.tenant();
      const proxy = await droppingProxy(server.baseUrl);
      try {
        const client = createClient({ baseUrl: `${proxy.url}/api/v1`, apiKey: key, retry: { baseDelayMs: 1 } });
        const stream = await client.streams.create({
          creator_id: streamBody().creator_id as string,
          product_name: "Lost answer",
          platform: "youtube",
        });
        expect(proxy.dropped()).toBe(1);
        const { streams, total } = await streamsOf(key);
        expect(total).toBe(1);
        expect(streams[0]!.id).toBe(stream.stream_id);
      } finally {
        await proxy.close();
      }
    });

    it("retries an end whose answer was lost after the server ended the stream, and resolves with the ended stream, not NotFoundError", async () => {
      const { key } = await server.tenant();
      const streamIds = [
        await server.call("POST", "/api/v1/streams", { key, body: streamBody() }),
        await server.call("POST", "/api/v1/streams", { key, body: streamBody() }),
      ].map((answer) => answer.body.stream_id as string);
      const proxy = await droppingProxy(server.baseUrl, "DELETE");
      try {
        const client = createClient({ baseUrl: `${proxy.url}/api/v1`, apiKey: key, retry: { baseDelayMs: 1 } });
        const ended = await client.streams.end(streamIds[0]!);
        expect(proxy.dropped()).toBe(1);
        expect(ended).toMatchObject({ stream_id: streamIds[0], status: "ended" });
        const stored = (await server.call("GET", `/api/v1/streams/${streamIds[0]}`, { key })).body;
        expect(ended.ended_at).toBe(stored.ended_at);
      } finally {
        await proxy.close();
      }
      // The same loss without a key (the raw client sends none): the retry meets 404.
      const keyless = await droppingProxy(server.baseUrl, "DELETE");
      try {
        const client = createClient({ baseUrl: `${keyless.url}/api/v1`, apiKey: key, retry: { baseDelayMs: 1 } });
        const { response } = await client.raw.DELETE("/streams/{id}", { params: { path: { id: streamIds[1]! } } });
        expect([keyless.dropped(), response.status]).toEqual([1, 404]);
      } finally {
        await keyless.close();
      }
    });
  });
});
