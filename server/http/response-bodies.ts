import { type components, streamCreatedStatusValues } from "../../generated/api.ts";
import { attemptResponseMaxLength, deliveryErrorMaxLength } from "../../generated/limits.ts";
import { keyHint } from "../domain/keys.ts";
import { atMostCharacters } from "../domain/text.ts";
import type { AnalyticsSummary } from "../domain/analytics.ts";
import type { DeliveryWithTarget } from "../store/deliveries.ts";
import type {
  ApiKeyRecord,
  Brand,
  Creator,
  DeliveryAttempt,
  Stream,
  Webhook,
  WebhookDelivery,
} from "../domain/types.ts";
import type { AnalyticsRow } from "../store/analytics.ts";

/**
 * Wire shapes, from the contract: the presenters below are the only place the HTTP response
 * bodies are built (the webhook body, which the delivery worker sends: presenters/webhook-event.ts).
 */
type Schemas = components["schemas"];

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/**
 * `value` as one of the values the contract documents for `what`: a stored value outside them
 * is a server bug, answered 500 and logged, never sent.
 */
export function documented<Value extends string>(values: readonly Value[], value: string, what: string): Value {
  const found = values.find((candidate) => candidate === value);
  if (found === undefined) throw new Error(`${what} ${value} is none of the contract's ${values.join(", ")}`);
  return found;
}

export function creatorSummary(creator: Creator): Schemas["CreatorSummary"] {
  return { ...creator };
}

/** Live-key streams carry the dispatch fields; test-key streams carry `test: true` instead. */
export function streamCreated(stream: Stream): Schemas["StreamCreated"] {
  const common = {
    stream_id: stream.id,
    status: documented(streamCreatedStatusValues, stream.status, "a created stream's status"),
    room_name: stream.roomName,
    ws_url: stream.wsUrl,
    viewer_token: stream.viewerToken,
    created_at: stream.createdAt.toISOString(),
  };
  return stream.mode === "test"
    ? { ...common, test: true }
    : { ...common, agent_dispatched: stream.agentDispatched ?? false, dispatch_method: stream.dispatchMethod };
}

export function streamSummary(stream: Stream, viewerCount: number): Schemas["StreamSummary"] {
  return {
    id: stream.id,
    status: stream.status,
    platform: stream.platform,
    vertical: stream.vertical,
    creator_id: stream.creatorPublicId,
    product_name: stream.productName,
    source: stream.source,
    room_name: stream.roomName,
    started_at: iso(stream.startedAt),
    ended_at: iso(stream.endedAt),
    created_at: stream.createdAt.toISOString(),
    viewer_count: viewerCount,
  };
}

export function streamDetail(stream: Stream, viewerCount: number): Schemas["StreamDetail"] {
  return {
    stream_id: stream.id,
    status: stream.status,
    creator_id: stream.creatorPublicId,
    product_name: stream.productName,
    platform: stream.platform,
    vertical: stream.vertical,
    viewer_count: viewerCount,
    started_at: iso(stream.startedAt),
    ended_at: iso(stream.endedAt),
    room_name: stream.roomName,
    events: [],
  };
}

export function streamEnded(stream: Stream): Schemas["StreamEnded"] {
  if (stream.endedAt === null) throw new Error(`stream ${stream.id}, answered as ended, has no end time`);
  return { stream_id: stream.id, status: "ended", ended_at: stream.endedAt.toISOString() };
}

/** The analytics answer without its streams (an empty array, last): the route writes them out as they are read. */
export function analyticsHead(
  result: AnalyticsSummary & { period: Schemas["Analytics"]["period"]; brand_id: string },
): Schemas["Analytics"] {
  return {
    period: result.period,
    brand_id: result.brand_id,
    total_streams: result.total_streams,
    total_viewers: result.total_viewers,
    total_minutes: result.total_minutes,
    live_now: result.live_now,
    avg_viewers_per_stream: result.avg_viewers_per_stream,
    by_platform: result.by_platform,
    streams: [],
  };
}

export function analyticsStream(row: AnalyticsRow): Schemas["AnalyticsStream"] {
  return {
    id: row.id,
    status: row.status,
    viewer_count: row.viewerCount,
    started_at: row.startedAt,
    ended_at: row.endedAt,
    platform: row.platform || "unknown",
    vertical: row.vertical,
  };
}

export function webhookRegistered(webhook: Webhook): Schemas["WebhookRegistered"] {
  return { webhook_id: webhook.id, url: webhook.url, events: webhook.events, secret: webhook.secret, active: true };
}

export function webhookSummary(webhook: Webhook): Schemas["WebhookSummary"] {
  return {
    webhook_id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    active: true,
    created_at: webhook.createdAt.toISOString(),
  };
}

/**
 * A failed attempt's reason as every delivery view shows it: it can quote the receiver's host or a
 * network error at any length, and the contract's `maxLength` bounds it.
 */
export function deliveryErrorText(error: string | null): string | null {
  return error === null ? null : atMostCharacters(error, deliveryErrorMaxLength);
}

export function webhookDelivery(delivery: WebhookDelivery): Schemas["WebhookDelivery"] {
  return {
    delivery_id: delivery.id,
    webhook_id: delivery.webhookId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    attempt: delivery.attempt,
    status: delivery.status,
    response_status: delivery.responseStatus,
    error: deliveryErrorText(delivery.error),
    next_attempt_at: iso(delivery.nextAttemptAt),
    last_attempt_at: iso(delivery.lastAttemptAt),
    created_at: delivery.createdAt.toISOString(),
  };
}

/** A delivery as the partner sees it (`GET /webhooks/deliveries`): the operator's view, with the URL and stream. */
export function partnerDelivery(delivery: DeliveryWithTarget): Schemas["Delivery"] {
  return { ...webhookDelivery(delivery), url: delivery.url, stream_id: delivery.streamId };
}

/** What asked for an attempt: the schedule, or (on a requested series' first attempt) a retry, a recover, the operator. */
function attemptTrigger(trigger: string | null): Schemas["DeliveryAttempt"]["trigger"] {
  return trigger === "retry" || trigger === "recover" || trigger === "operator" ? trigger : "schedule";
}

/** One attempt as the partner and the dashboard see it: the receiver's answer cut to the contract's length. */
export function deliveryAttempt(attempt: DeliveryAttempt): Schemas["DeliveryAttempt"] {
  return {
    series: attempt.series,
    attempt: attempt.attempt,
    attempted_at: attempt.attemptedAt.toISOString(),
    response_status: attempt.responseStatus,
    error: deliveryErrorText(attempt.error),
    duration_ms: attempt.durationMs,
    response_body:
      attempt.responseBody === null ? null : atMostCharacters(attempt.responseBody, attemptResponseMaxLength),
    trigger: attemptTrigger(attempt.trigger),
    requested_by: attempt.requestedBy,
  };
}

/** A delivery with its attempts and the body sent (`GET /webhooks/deliveries/{delivery_id}`). */
export function deliveryDetail(found: {
  delivery: DeliveryWithTarget;
  payload: string;
  attempts: DeliveryAttempt[];
}): Schemas["DeliveryDetail"] {
  return {
    delivery: partnerDelivery(found.delivery),
    payload: found.payload,
    attempts: found.attempts.map(deliveryAttempt),
  };
}

export function brand(brand: Brand): Schemas["Brand"] {
  return {
    brand_id: brand.id,
    name: brand.name,
    vertical: brand.vertical,
    plan: brand.plan,
    credits_cents: brand.creditsCents,
    credits_held_cents: brand.creditsHeldCents,
    plan_minutes: brand.planMinutes,
    minutes_used: brand.minutesUsed,
    rate_limit_per_minute: brand.rateLimitPerMinute,
    max_active_streams: brand.maxActiveStreams,
    created_at: brand.createdAt.toISOString(),
  };
}

export function keySummary(record: ApiKeyRecord): Schemas["KeySummary"] {
  return {
    key_id: record.id,
    brand_id: record.brandId,
    name: record.name,
    key_hint: keyHint(record.environment, record.lastFour),
    environment: record.environment,
    scopes: record.scopes,
    created_at: record.createdAt.toISOString(),
    expires_at: iso(record.expiresAt),
    revoked_at: iso(record.revokedAt),
  };
}

export function keyCreated(record: ApiKeyRecord, key: string): Schemas["KeyCreated"] {
  return {
    key_id: record.id,
    key,
    brand_id: record.brandId,
    environment: record.environment,
    scopes: record.scopes,
    created_at: record.createdAt.toISOString(),
    expires_at: iso(record.expiresAt),
  };
}
