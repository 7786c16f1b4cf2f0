import createOpenApiClient, { type Client } from "openapi-fetch";
import type { operations, paths } from "../generated/api.ts";
import { errorFromBody } from "./errors.ts";
import { listenEvents, type ListenedEvent, type ListenOptions } from "./listen.ts";
import { paginate } from "./pagination.ts";
import { IDEMPOTENCY_KEY_HEADER, whyNotRetried, withRetry, type FetchLike, type RetryOptions } from "./retry.ts";

type JsonBody<Op, Status extends number> = Op extends {
  responses: { [S in Status]: { content: { "application/json": infer Body } } };
}
  ? Body
  : never;
type RequestBody<Op> = Op extends { requestBody: { content: { "application/json": infer Body } } } ? Body : never;
type Query<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type Discovery = JsonBody<operations["getDiscovery"], 200>;
export type CreatorList = JsonBody<operations["listCreators"], 200>;
export type CreateStreamBody = RequestBody<operations["createStream"]>;
export type StreamCreated = JsonBody<operations["createStream"], 201>;
export type ListStreamsQuery = Query<operations["listStreams"]>;
export type StreamList = JsonBody<operations["listStreams"], 200>;
export type StreamSummary = StreamList["streams"][number];
export type StreamDetail = JsonBody<operations["getStream"], 200>;
export type StreamEnded = JsonBody<operations["endStream"], 200>;
export type AnalyticsQuery = Query<operations["getAnalytics"]>;
export type Analytics = JsonBody<operations["getAnalytics"], 200>;
export type CreateWebhookBody = RequestBody<operations["createWebhook"]>;
export type WebhookRegistered = JsonBody<operations["createWebhook"], 201>;
export type WebhookList = JsonBody<operations["listWebhooks"], 200>;
export type WebhookDeleted = JsonBody<operations["deleteWebhook"], 200>;
export type DeliveriesQuery = Query<operations["listWebhookDeliveries"]>;
export type DeliveryList = JsonBody<operations["listWebhookDeliveries"], 200>;
export type Delivery = DeliveryList["deliveries"][number];
export type DeliveryDetail = JsonBody<operations["getWebhookDelivery"], 200>;
export type DeliveryAttempt = DeliveryDetail["attempts"][number];
export type RecoverDeliveriesBody = RequestBody<operations["recoverWebhookDeliveries"]>;
export type DeliveriesRecovered = JsonBody<operations["recoverWebhookDeliveries"], 202>;
export type RequestsQuery = Query<operations["listRequests"]>;
export type RequestLogList = JsonBody<operations["listRequests"], 200>;
export type RequestLogEntry = RequestLogList["requests"][number];
export type RequestLogDetail = JsonBody<operations["getRequest"], 200>;
export type TestClock = JsonBody<operations["getTestClock"], 200>;

export interface ClientOptions {
  /** API root: `https://<host>/api/v1` for the service, `http://127.0.0.1:4010/api/v1` for the mock. */
  baseUrl: string;
  /** `svc_test_…` or `svc_live_…`; only `discovery()` and `creators.list()` work without one. */
  apiKey?: string | undefined;
  fetch?: FetchLike | undefined;
  /**
   * Backoff for GET, DELETE and POST (which carries an Idempotency-Key): `maxRetries`,
   * `baseDelayMs`, `maxRateLimitWaitMs`, `onRetry`; `{ maxRetries: 0 }` turns it off.
   */
  retry?: RetryOptions | undefined;
  /** Sent with every request (e.g. Prism's `Prefer`). */
  headers?: Record<string, string> | undefined;
}

/** Per-call extras. (A type, not an interface, so it fits openapi-fetch's indexed init.) */
export type CallOptions = {
  headers?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
};

/**
 * Options of a POST (streams.create, webhooks.create). `idempotencyKey` names the operation for
 * the server: every POST sends one (a new random UUID unless given), and retries send the same, so
 * the server acts at most once. Pass your own, stored with the work it stands for, to retry across
 * restarts of your process; the server replays the first answer for 24 hours.
 */
export type PostOptions = CallOptions & {
  idempotencyKey?: string | undefined;
};

/**
 * Options of streams.end: like a POST, every end sends an `idempotencyKey` (a new random UUID
 * unless given), the same on each retry, so a retry whose first answer was lost gets that answer
 * (the ended stream) rather than 404 for a stream that is no longer live.
 */
export type EndOptions = PostOptions;

export type RawClient = Client<paths, "application/json">;

/** What the server accepts as an Idempotency-Key: 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[!-~]{1,255}$/;

/** `options` with the Idempotency-Key header: the given key, else a new random one. */
function withIdempotencyKey(method: string, { idempotencyKey, ...options }: PostOptions = {}): CallOptions {
  if (idempotencyKey !== undefined && (typeof idempotencyKey !== "string" || !IDEMPOTENCY_KEY.test(idempotencyKey))) {
    throw new TypeError(
      `${method}: idempotencyKey must be 1 to 255 visible ASCII characters without spaces (a UUID is a good choice), got ${JSON.stringify(idempotencyKey)}.`,
    );
  }
  return {
    ...options,
    headers: { ...options.headers, [IDEMPOTENCY_KEY_HEADER]: idempotencyKey ?? globalThis.crypto.randomUUID() },
  };
}

/**
 * A client for the Live Stream Hosting API. Each method resolves with the response body or
 * throws an `ApiError` subclass (see errors.ts); `raw` is the underlying openapi-fetch client,
 * which never throws for HTTP errors and reaches every documented path.
 */
export function createClient(clientOptions: ClientOptions) {
  if (typeof clientOptions !== "object" || clientOptions === null) {
    throw new TypeError(
      'createClient: pass an options object, e.g. createClient({ baseUrl: "http://localhost:8080/api/v1", apiKey }).',
    );
  }
  const { baseUrl, apiKey, fetch = globalThis.fetch, retry, headers } = clientOptions;
  assertBaseUrl(baseUrl);
  assertApiKey(apiKey);
  if (typeof fetch !== "function") {
    throw new TypeError(
      "createClient: fetch must be a function (Request) => Promise<Response>; omit it to use globalThis.fetch.",
    );
  }
  const raw: RawClient = createOpenApiClient<paths, "application/json">({
    baseUrl,
    fetch: withRetry(fetch, retry),
    headers: { ...headers, ...(apiKey === undefined ? {} : { Authorization: `Bearer ${apiKey}` }) },
  });

  const unwrap = <Data>(result: { data?: Data; error?: unknown; response: Response }): Data => {
    if (result.response.ok) return result.data as Data;
    const error = errorFromBody(result.response.status, result.error, result.response);
    const notRetried = whyNotRetried(result.response);
    if (notRetried !== undefined) error.message += ` (${notRetried})`;
    if (error.status === 401 && apiKey === undefined) {
      error.message += " (This client was created without apiKey: pass createClient({ baseUrl, apiKey }).)";
    }
    throw error;
  };

  const streams = {
    /**
     * POST /streams: starts a stream. Sent with an Idempotency-Key (see PostOptions), so it is
     * retried like GET: a retry whose first attempt did reach the server gets that attempt's
     * answer, never a second stream.
     */
    async create(body: CreateStreamBody, options?: PostOptions): Promise<StreamCreated> {
      return unwrap(await raw.POST("/streams", { body, ...withIdempotencyKey("streams.create", options) }));
    },
    /** GET /streams: one page, newest first. */
    async list(query: ListStreamsQuery = {}, options?: CallOptions): Promise<StreamList> {
      return unwrap(await raw.GET("/streams", { params: { query }, ...options }));
    },
    /** Every stream matching `query.status`, fetching pages of `query.limit` (default 100) on demand. */
    listAll(query: ListStreamsQuery = {}, options?: CallOptions): AsyncGenerator<StreamSummary, void, undefined> {
      const { limit = 100, offset = 0, ...filter } = query;
      return paginate<StreamSummary>(
        async (page) => {
          const { streams: items, total } = await streams.list({ ...filter, ...page }, options);
          return { items, total };
        },
        { limit, offset },
      );
    },
    /** GET /streams/{id}. */
    async get(id: string, options?: CallOptions): Promise<StreamDetail> {
      assertId("streams.get", id, "stream_id returned by streams.create()");
      return unwrap(await raw.GET("/streams/{id}", { params: { path: { id } }, ...options }));
    },
    /**
     * DELETE /streams/{id}: ends a live stream; 404 `not_found` when it is not live. Sent with an
     * Idempotency-Key (see EndOptions), so a retry after a lost answer resolves with the ended stream.
     */
    async end(id: string, options?: EndOptions): Promise<StreamEnded> {
      assertId("streams.end", id, "stream_id returned by streams.create()");
      return unwrap(
        await raw.DELETE("/streams/{id}", { params: { path: { id } }, ...withIdempotencyKey("streams.end", options) }),
      );
    },
  };

  const deliveriesPage = async (query: DeliveriesQuery = {}, options?: CallOptions): Promise<DeliveryList> =>
    unwrap(await raw.GET("/webhooks/deliveries", { params: { query }, ...options }));

  const requestsPage = async (query: RequestsQuery = {}, options?: CallOptions): Promise<RequestLogList> => {
    // An absent filter is left out, not sent empty.
    const sent = Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as RequestsQuery;
    return unwrap(await raw.GET("/requests", { params: { query: sent }, ...options }));
  };

  return {
    raw,
    /** GET /: the public discovery document; needs no key. */
    async discovery(options?: CallOptions): Promise<Discovery> {
      return unwrap(await raw.GET("/", options));
    },
    creators: {
      /** GET /creators: stock creators sorted by name; needs no key. */
      async list(options?: CallOptions): Promise<CreatorList> {
        return unwrap(await raw.GET("/creators", options));
      },
    },
    streams,
    analytics: {
      /** GET /analytics: aggregates over `period` (default 7d), optionally for one stream. */
      async get(query: AnalyticsQuery = {}, options?: CallOptions): Promise<Analytics> {
        return unwrap(await raw.GET("/analytics", { params: { query }, ...options }));
      },
    },
    webhooks: {
      /** POST /webhooks: the response's `secret` is shown only here (and in replays of its Idempotency-Key); store it. */
      async create(body: CreateWebhookBody, options?: PostOptions): Promise<WebhookRegistered> {
        return unwrap(await raw.POST("/webhooks", { body, ...withIdempotencyKey("webhooks.create", options) }));
      },
      /** GET /webhooks: registered webhooks, without secrets. */
      async list(options?: CallOptions): Promise<WebhookList> {
        return unwrap(await raw.GET("/webhooks", options));
      },
      /** DELETE /webhooks?id=: idempotent; an unknown id also answers `deleted: true`. */
      async delete(id: string, options?: CallOptions): Promise<WebhookDeleted> {
        assertId("webhooks.delete", id, "webhook_id returned by webhooks.create()");
        return unwrap(await raw.DELETE("/webhooks", { params: { query: { id } }, ...options }));
      },
      /**
       * GET /webhooks/deliveries: one page of the key's mode's deliveries, newest first,
       * optionally of one stream's events (`stream_id`), one webhook (`webhook_id`) or one
       * outcome (`status`: `pending`, `succeeded`, `failed`).
       */
      deliveries: deliveriesPage,
      /** GET /webhooks/deliveries/{delivery_id}: one delivery, every attempt (the receiver's answers) and the body sent. */
      async retrieveDelivery(deliveryId: string, options?: CallOptions): Promise<DeliveryDetail> {
        assertId("webhooks.retrieveDelivery", deliveryId, "delivery_id from webhooks.deliveries()");
        return unwrap(
          await raw.GET("/webhooks/deliveries/{delivery_id}", {
            params: { path: { delivery_id: deliveryId } },
            ...options,
          }),
        );
      },
      /**
       * POST /webhooks/deliveries/{delivery_id}/retry: sends the delivery again now (same event id
       * and body, fresh signature), whatever its status. Sent with an Idempotency-Key (see PostOptions).
       */
      async retryDelivery(deliveryId: string, options?: PostOptions): Promise<Delivery> {
        assertId("webhooks.retryDelivery", deliveryId, "delivery_id from webhooks.deliveries()");
        return unwrap(
          await raw.POST("/webhooks/deliveries/{delivery_id}/retry", {
            params: { path: { delivery_id: deliveryId } },
            ...withIdempotencyKey("webhooks.retryDelivery", options),
          }),
        );
      },
      /**
       * POST /webhooks/recover: sends every failed delivery of `webhook_id` since `since` (at most
       * 7 days back) again, 10,000 a call; call again while `has_more`.
       */
      async recover(body: RecoverDeliveriesBody, options?: PostOptions): Promise<DeliveriesRecovered> {
        return unwrap(
          await raw.POST("/webhooks/recover", { body, ...withIdempotencyKey("webhooks.recover", options) }),
        );
      },
      /** Every delivery matching `query`'s filters, fetching pages of `query.limit` (default 100) on demand. */
      listAllDeliveries(query: DeliveriesQuery = {}, options?: CallOptions): AsyncGenerator<Delivery, void, undefined> {
        const { limit = 100, offset = 0, ...filter } = query;
        return paginate<Delivery>(
          async (page) => {
            const { deliveries: items, total } = await deliveriesPage({ ...filter, ...page }, options);
            return { items, total };
          },
          { limit, offset, keyOf: (delivery) => delivery.delivery_id },
        );
      },
      /**
       * GET /webhooks/listen (test keys): the brand's test-mode events as they happen, each with
       * its delivery body exactly as a webhook receives it. Reconnects by itself and resumes
       * after the last event; ends when `options.signal` aborts; throws for what reconnecting
       * cannot fix (a live key, a missing scope).
       */
      listen(options?: ListenOptions): AsyncGenerator<ListenedEvent, void, undefined> {
        return listenEvents(
          fetch,
          `${baseUrl.replace(/\/$/, "")}/webhooks/listen`,
          { ...headers, ...(apiKey === undefined ? {} : { Authorization: `Bearer ${apiKey}` }) },
          options,
        );
      },
    },
    testClock: {
      /** GET /test-clock (test keys): the brand's test clock, `{ now, offset_seconds }`; live keys get `TestModeOnlyError`. */
      async get(options?: CallOptions): Promise<TestClock> {
        return unwrap(await raw.GET("/test-clock", options));
      },
      /**
       * POST /test-clock/advance (test keys): moves the brand's test clock `seconds` forward (1 to
       * 604800, at most 7 days a call). Resolves once every test stream's transition due by the
       * new time has happened; webhook attempts due by then follow within seconds. Never retried
       * (a second advance would move the clock twice): after a network failure, read the clock.
       */
      async advance(seconds: number, options?: CallOptions): Promise<TestClock> {
        return unwrap(await raw.POST("/test-clock/advance", { body: { seconds }, ...options }));
      },
    },
    requests: {
      /**
       * GET /requests: one page of the key's mode's request log, newest first (key `logs:read`):
       * filter by `status` (`429`, `4xx`…), `method`, `path` and `since`; page with
       * `starting_after` (the last entry's `id`) while `has_more`.
       */
      list: requestsPage,
      /** GET /requests/{request_id}: one logged request (by its `Request-Id`) with its redacted bodies. */
      async retrieve(requestId: string, options?: CallOptions): Promise<RequestLogDetail> {
        assertId("requests.retrieve", requestId, "request_id of a logged request (its Request-Id header)");
        return unwrap(
          await raw.GET("/requests/{request_id}", { params: { path: { request_id: requestId } }, ...options }),
        );
      },
      /** Every logged request matching `query`'s filters, newest first, fetching pages on demand. */
      async *listAll(
        query: RequestsQuery = {},
        options?: CallOptions,
      ): AsyncGenerator<RequestLogEntry, void, undefined> {
        let after = query.starting_after;
        for (;;) {
          const page = await requestsPage({ ...query, limit: query.limit ?? 100, starting_after: after }, options);
          yield* page.requests;
          const last = page.requests.at(-1);
          if (!page.has_more || !last) return;
          after = last.id;
        }
      },
    },
  };
}

export type LiveStreamClient = ReturnType<typeof createClient>;

function assertBaseUrl(baseUrl: unknown): asserts baseUrl is string {
  const example =
    'e.g. createClient({ baseUrl: "http://localhost:8080/api/v1", apiKey }) or "http://127.0.0.1:4010/api/v1" for the mock';
  if (typeof baseUrl !== "string" || baseUrl === "") {
    throw new TypeError(`createClient: baseUrl is required, ${example}.`);
  }
  let protocol: string;
  try {
    protocol = new URL(baseUrl).protocol;
  } catch {
    throw new TypeError(`createClient: baseUrl "${baseUrl}" is not an absolute URL, ${example}.`);
  }
  if (protocol !== "http:" && protocol !== "https:") {
    throw new TypeError(`createClient: baseUrl must start with http:// or https://, got "${baseUrl}".`);
  }
}

function assertApiKey(apiKey: unknown): asserts apiKey is string | undefined {
  if (apiKey === undefined) return;
  if (typeof apiKey !== "string" || apiKey.trim() === "") {
    throw new TypeError(
      "createClient: apiKey is empty; pass your svc_test_… or svc_live_… key, or omit apiKey for discovery() and creators.list().",
    );
  }
  if (/^bearer\s/i.test(apiKey)) {
    throw new TypeError('createClient: pass apiKey without the "Bearer " prefix; the client adds it.');
  }
  if (/\s/.test(apiKey)) {
    throw new TypeError("createClient: apiKey contains whitespace; copy the key exactly as shown when it was created.");
  }
}

function assertId(method: string, id: unknown, what: string): asserts id is string {
  if (typeof id !== "string" || id === "") {
    throw new TypeError(`${method}(id): id must be the ${what}, got ${id === "" ? "an empty string" : typeof id}.`);
  }
}
