/**
 * Makes the static mock's documented examples agree with the request, as the server's answers
 * do: ids, `limit`/`offset`, `period`, the webhook's `url`/`events` echo the request, streams are
 * in the mock's vertical (`--vertical`), and GET /streams pages through the documented page, GET
 * /webhooks/deliveries and GET /requests filter and page their examples, as the server pages.
 * Error bodies, and answers a partner chose with `Prefer: code=` or `example=`, are left as Prism
 * sent them.
 */
import type { Vertical } from "../server/domain/types.ts";
import { platformsOf } from "../server/domain/vertical.ts";

export interface AnswerContext {
  operationId: string;
  /** The `{id}` of the path, for operations that have one. */
  pathId: string | undefined;
  /** The query as the server's normalisers left it (`limit`/`offset` clamped). */
  query: Record<string, unknown>;
  /** GET /analytics' default `period` (the contract's), for a request that names none. */
  defaultPeriod: string;
  body: unknown;
  /** The vertical of the brand the mock plays (`--vertical`). */
  vertical: Vertical;
  /** This mock's origin, which the discovery document names. */
  publicUrl: string;
  /** The partner chose the answer with `Prefer: code=` or `example=`: it is sent as Prism made it, untouched. */
  explicitExample: boolean;
  now: Date;
}

type Json = Record<string, any>;

export function shapeAnswer(body: unknown, status: number, ctx: AnswerContext): unknown {
  if (ctx.explicitExample || status < 200 || status >= 300 || typeof body !== "object" || body === null) return body;
  const answer = structuredClone(body) as Json;
  switch (ctx.operationId) {
    case "getDiscovery":
      return { ...answer, docs: `${ctx.publicUrl}/docs`, openapi: `${ctx.publicUrl}/docs/openapi.yaml` };
    case "listStreams":
      return shapeStreamList(answer, ctx);
    case "getStream":
      answer.stream_id = ctx.pathId;
      answer.events = [];
      fitVertical(answer, ctx.vertical);
      return answer;
    case "endStream":
      answer.stream_id = ctx.pathId;
      return answer;
    case "getAnalytics":
      answer.period = typeof ctx.query.period === "string" ? ctx.query.period : ctx.defaultPeriod;
      for (const stream of answer.streams ?? []) fitVertical(stream, ctx.vertical);
      return answer;
    case "createWebhook": {
      const { url, events } = ctx.body as { url: string; events: string[] };
      return { ...answer, url, events, active: true };
    }
    case "listWebhookDeliveries":
      return shapeDeliveryList(answer, ctx);
    case "deleteWebhook":
      return { ...answer, webhook_id: ctx.query.id, deleted: true };
    case "getWebhookDelivery":
      return { ...answer, delivery: { ...answer.delivery, delivery_id: ctx.pathId } };
    case "retryWebhookDelivery":
      // Queued again now: a new series, its first attempt due at once.
      return {
        ...answer,
        delivery_id: ctx.pathId,
        status: "pending",
        attempt: 0,
        next_attempt_at: ctx.now.toISOString(),
      };
    case "recoverWebhookDeliveries":
      return { ...answer, has_more: false };
    case "listRequests":
      return shapeRequestLog(answer, ctx);
    case "getRequest":
      return { ...answer, request: { ...answer.request, request_id: ctx.pathId } };
    // The mock keeps no clock: it reads as never advanced, and an advance as the first one.
    case "getTestClock":
      return { ...answer, now: ctx.now.toISOString(), offset_seconds: 0 };
    case "advanceTestClock": {
      const { seconds } = ctx.body as { seconds: number };
      return { ...answer, now: new Date(ctx.now.getTime() + seconds * 1000).toISOString(), offset_seconds: seconds };
    }
    default:
      return answer;
  }
}

/**
 * The documented page is the whole set, paged as the server pages: the status filter first (an
 * unrecognised status matches nothing), then `offset` and `limit`.
 */
function shapeStreamList(answer: Json, ctx: AnswerContext): Json {
  const limit = Number(ctx.query.limit);
  const offset = Number(ctx.query.offset);
  const status = typeof ctx.query.status === "string" ? ctx.query.status : undefined;
  const streams = ((answer.streams ?? []) as Json[]).filter(
    (stream) => status === undefined || stream.status === status,
  );
  const page = streams.slice(offset, offset + limit);
  for (const stream of page) fitVertical(stream, ctx.vertical);
  return { ...answer, streams: page, total: streams.length, limit, offset };
}

/** GET /webhooks/deliveries pages and filters its deliveries as the server does. */
function shapeDeliveryList(answer: Json, ctx: AnswerContext): Json {
  const limit = ctx.query.limit === undefined ? 100 : Number(ctx.query.limit);
  const offset = ctx.query.offset === undefined ? 0 : Number(ctx.query.offset);
  const matching = ((answer.deliveries ?? []) as Json[]).filter(
    (delivery) =>
      (ctx.query.webhook_id === undefined || delivery.webhook_id === ctx.query.webhook_id) &&
      (ctx.query.stream_id === undefined || delivery.stream_id === ctx.query.stream_id),
  );
  return { ...answer, deliveries: matching.slice(offset, offset + limit), total: matching.length, limit, offset };
}

/**
 * GET /requests filters and pages its entries as the server does: newest first (by `id`, a
 * UUIDv7 on the server), `status` a code or a class, `method`, `path` (or below it), `since`,
 * `starting_after` and `limit`, with `has_more`.
 */
function shapeRequestLog(answer: Json, ctx: AnswerContext): Json {
  const { status, method, path, since, starting_after: after } = ctx.query as Record<string, string | undefined>;
  const limit = ctx.query.limit === undefined ? 20 : Number(ctx.query.limit);
  const under = path === undefined ? undefined : path.replace(/\/+$/, "") || "/";
  const matching = ((answer.requests ?? []) as Json[])
    .toSorted((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .filter(
      (entry) =>
        (status === undefined ||
          (status.endsWith("xx") ? String(entry.status)[0] === status[0] : String(entry.status) === status)) &&
        (method === undefined || entry.method === method) &&
        (under === undefined ||
          entry.path === under ||
          String(entry.path).startsWith(under === "/" ? "/" : `${under}/`)) &&
        (since === undefined || Date.parse(entry.created_at) >= Date.parse(since)) &&
        (after === undefined || entry.id < after.toLowerCase()),
    );
  return { ...answer, requests: matching.slice(0, limit), has_more: matching.length > limit };
}

/**
 * Puts a stream in the brand's vertical, as the server's data always is: its `vertical` is the
 * brand's, and an igaming stream's platform one the vertical permits (the same for the same stream).
 */
function fitVertical(stream: Json, vertical: Vertical): void {
  if ("vertical" in stream) stream.vertical = vertical;
  const platforms = platformsOf(vertical);
  if (platforms && typeof stream.platform === "string" && !platforms.includes(stream.platform))
    stream.platform = platforms[hash(`platform:${stream.stream_id ?? stream.id}`) % platforms.length];
}

/** A small stable hash (FNV-1a): the same stream gets the same platform on every answer. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
