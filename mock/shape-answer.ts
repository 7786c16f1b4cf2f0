/**
 * Makes Prism's success bodies agree with the request and with themselves, as the server's do.
 * Both modes: ids, `limit`/`offset`, `period`, the webhook's `url`/`events` echo the request,
 * streams are in the mock's vertical (`--vertical`), and GET /streams pages through one fixed set
 * as the server pages (static: the documented page; dynamic: the seed's streams,
 * stream-catalogue.ts), its status filter included. Dynamic answers (the mock's mode, or
 * `Prefer: dynamic=true` on one request) also get a believable timeline (timeline.ts), the same
 * for the same seed, creators GET /creators lists, the key's answer of POST /streams, and
 * analytics totals that add up.
 * Error bodies, and answers a partner chose with `Prefer: code=` or `example=`, are left as Prism
 * sent them.
 */
import type { Mode, Vertical } from "../server/domain/types.ts";
import { hash } from "./stable-hash.ts";
import { pageOf } from "./stream-catalogue.ts";
import { fitVertical, settle } from "./timeline.ts";

export interface AnswerContext {
  operationId: string;
  /** The `{id}` of the path, for operations that have one. */
  pathId: string | undefined;
  /** The query as the server's normalisers left it (`limit`/`offset` clamped). */
  query: Record<string, unknown>;
  /** GET /analytics' default `period` (the contract's), for a request that names none. */
  defaultPeriod: string;
  body: unknown;
  /** The key's environment; null without a key. */
  mode: Mode | null;
  /** This answer is generated (the mock's mode, or the request's `Prefer: dynamic=`). */
  dynamic: boolean;
  /** The vertical of the brand the mock plays (`--vertical`). */
  vertical: Vertical;
  /** This mock's origin, which the discovery document names. */
  publicUrl: string;
  /** The partner chose the answer with `Prefer: code=` or `example=`: it is sent as Prism made it, untouched. */
  explicitExample: boolean;
  now: Date;
  /** Dynamic answers: the instant the seed's timeline is drawn back from, so that every answer for the seed agrees. */
  timelineAt: Date;
  /** Dynamic answers: the streams of the seed in use (stream-catalogue.ts), which GET /streams pages through. */
  catalogue?: readonly Json[];
  /** The creators GET /creators lists. */
  creatorIds: readonly string[];
}

type Json = Record<string, any>;

const HOUR = 3_600_000;

export function shapeAnswer(body: unknown, status: number, ctx: AnswerContext): unknown {
  if (ctx.explicitExample || status < 200 || status >= 300 || typeof body !== "object" || body === null) return body;
  const answer = structuredClone(body) as Json;
  const timeline = ctx.dynamic;
  switch (ctx.operationId) {
    case "getDiscovery":
      return { ...answer, docs: `${ctx.publicUrl}/docs`, openapi: `${ctx.publicUrl}/docs/openapi.yaml` };
    case "listStreams":
      return shapeStreamList(answer, ctx, timeline);
    case "getStream":
      answer.stream_id = ctx.pathId;
      answer.events = [];
      fitVertical(answer, ctx.vertical);
      if (timeline) {
        listedCreator(answer, ctx);
        Object.assign(answer, catalogued(answer, ctx));
        settle(answer, ctx.timelineAt);
      }
      return answer;
    case "endStream":
      answer.stream_id = ctx.pathId;
      if (timeline) answer.ended_at = ctx.now.toISOString();
      return answer;
    case "createStream":
      return timeline ? shapeCreated(answer, ctx) : answer;
    case "getAnalytics":
      return shapeAnalytics(answer, ctx, timeline);
    case "createWebhook": {
      const { url, events } = ctx.body as { url: string; events: string[] };
      return { ...answer, url, events, active: true };
    }
    case "listWebhooks":
      if (timeline)
        for (const webhook of answer.webhooks ?? [])
          webhook.created_at = pastTime(ctx.timelineAt, webhook.webhook_id, 30 * 24 * HOUR);
      return answer;
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

function shapeStreamList(answer: Json, ctx: AnswerContext, timeline: boolean): Json {
  const limit = Number(ctx.query.limit);
  const offset = Number(ctx.query.offset);
  const status = typeof ctx.query.status === "string" ? ctx.query.status : undefined;
  // Static: the documented page is the whole set; dynamic: the seed's set. Either is paged as the
  // server pages (an unrecognised status matches nothing).
  // The seed's set is already settled and in the vertical (stream-catalogue.ts).
  const page = pageOf(timeline ? (ctx.catalogue ?? []) : (answer.streams ?? []), { limit, offset, status });
  if (!timeline) for (const stream of page.streams) fitVertical(stream, ctx.vertical);
  return { ...answer, streams: page.streams, total: page.total, limit, offset };
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

/** The fields a catalogued stream (listed by GET /streams) shares with its detail. */
const SHARED_FIELDS = ["status", "creator_id", "product_name", "platform", "vertical", "viewer_count", "room_name"];

/** A stream GET /streams lists is described alike by GET /streams/{id}. */
function catalogued(detail: Json, ctx: AnswerContext): Json {
  const listed = ctx.catalogue?.find((stream) => stream.id === detail.stream_id);
  if (!listed) return {};
  return Object.fromEntries(
    SHARED_FIELDS.filter((field) => field in listed && field in detail).map((field) => [field, listed[field]]),
  );
}

/** A generated `creator_id` becomes one GET /creators lists (the same for the same stream). */
function listedCreator(stream: Json, ctx: AnswerContext): void {
  if (
    typeof stream.creator_id !== "string" ||
    ctx.creatorIds.length === 0 ||
    ctx.creatorIds.includes(stream.creator_id)
  )
    return;
  stream.creator_id = ctx.creatorIds[hash(`creator:${stream.stream_id ?? stream.id}`) % ctx.creatorIds.length];
}

function shapeCreated(answer: Json, ctx: AnswerContext): Json {
  answer.created_at = ctx.now.toISOString();
  if (ctx.mode === "test") {
    const { agent_dispatched: _dispatched, dispatch_method: _method, ...rest } = answer;
    return { ...rest, status: "live", test: true, ws_url: null, viewer_token: null };
  }
  const { test: _test, ...rest } = answer;
  return { ...rest, status: "preparing", agent_dispatched: true, dispatch_method: rest.dispatch_method ?? "simulated" };
}

function shapeAnalytics(answer: Json, ctx: AnswerContext, timeline: boolean): Json {
  answer.period = typeof ctx.query.period === "string" ? ctx.query.period : ctx.defaultPeriod;
  for (const stream of answer.streams ?? []) fitVertical(stream, ctx.vertical);
  if (!timeline) return answer;
  let streams: Json[] = answer.streams ?? [];
  if (typeof ctx.query.stream_id === "string")
    streams = streams.slice(0, 1).map((stream) => ({ ...stream, id: ctx.query.stream_id }));
  for (const stream of streams) {
    listedCreator(stream, ctx);
    settle(stream, ctx.timelineAt);
  }
  const totalViewers = streams.reduce((sum, stream) => sum + stream.viewer_count, 0);
  const byPlatform: Record<string, number> = {};
  for (const stream of streams)
    byPlatform[stream.platform ?? "unknown"] = (byPlatform[stream.platform ?? "unknown"] ?? 0) + 1;
  return {
    ...answer,
    streams,
    total_streams: streams.length,
    total_viewers: totalViewers,
    total_minutes: streams.reduce((sum, stream) => sum + minutesStreamed(stream), 0),
    live_now: streams.filter((stream) => stream.status === "live").length,
    avg_viewers_per_stream: streams.length === 0 ? 0 : totalViewers / streams.length,
    by_platform: byPlatform,
  };
}

function minutesStreamed(stream: Json): number {
  if (!stream.started_at || !stream.ended_at) return 0;
  return Math.ceil((Date.parse(stream.ended_at) - Date.parse(stream.started_at)) / 60_000);
}

function pastTime(now: Date, id: unknown, range: number): string {
  return new Date(now.getTime() - (hash(String(id)) % range)).toISOString();
}
