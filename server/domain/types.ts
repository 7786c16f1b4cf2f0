import { type components, scopeValues, streamStatusValues } from "../../generated/api.ts";
import { bigint, bool, type InsertOf, int, type RecordOf, table, text, time } from "./table.ts";

type Schemas = components["schemas"];

/**
 * Plain data shared by the domain, store and HTTP layers. The value sets the contract defines are
 * taken from it (generated/), so a change to openapi.yaml reaches every layer through tsc.
 */
export type Mode = Schemas["KeyCreate"]["environment"];
export type StreamStatus = Schemas["StreamStatus"];
export type Vertical = Schemas["Vertical"];
export type Plan = Schemas["Plan"];
/** A dashboard member's role; contract/operations.ts ranks them (DASHBOARD_ROLES). */
export type Role = Schemas["DashboardRole"];
export type Scope = Schemas["Scope"];
export type EventType = Schemas["WebhookEventType"];
export type DeliveryStatus = Schemas["DeliveryStatus"];
/** What an audit entry records (`key.created`, `session.revoked`…): the contract's list. */
export type AuditAction = Schemas["DashboardAuditAction"];

/** Every scope and every stream status, in the contract's order. */
export const ALL_SCOPES: readonly Scope[] = scopeValues;
export const STREAM_STATUSES: readonly StreamStatus[] = streamStatusValues;
export type SimTrigger = "sim:launch-failed" | "sim:never-joins" | "sim:fails-live";

export interface Brand {
  id: string;
  name: string;
  vertical: Vertical;
  plan: Plan;
  creditsCents: number;
  creditsHeldCents: number;
  planMinutes: number;
  minutesUsed: number;
  rateLimitPerMinute: number;
  maxActiveStreams: number;
  createdAt: Date;
}

/** A stream, and its table (domain/table.ts: each field a column, named in snake_case). */
export const STREAMS = table("streams", {
  id: text(),
  brandId: text(),
  mode: text<Mode>(),
  status: text<StreamStatus>(),
  creatorId: text(),
  /** null when the creator is no longer in the catalogue (store/streams.ts joins creators). */
  creatorPublicId: text().nullable().computed(),
  productName: text(),
  platform: text(),
  vertical: text<Vertical>(),
  source: text(),
  durationMinutes: int().nullable(),
  /** Never read back (and possibly long). */
  script: text().nullable().writeOnly(),
  roomName: text(),
  wsUrl: text().nullable(),
  viewerToken: text().nullable(),
  agentDispatched: bool().nullable(),
  dispatchMethod: text().nullable(),
  viewerCount: int(),
  createdAt: time(),
  startedAt: time().nullable(),
  endedAt: time().nullable(),
  joinAt: time().nullable(),
  failAt: time().nullable(),
  timeoutAt: time().nullable(),
  /** The earliest scheduled transition above (lifecycle.ts nextDueAt): the sweeper's index. */
  nextDueAt: time().nullable().writeOnly(),
  simTrigger: text<SimTrigger>().nullable(),
  pricePerMinuteCents: int(),
  holdCents: bigint(),
  billedMinutes: int().nullable(),
  chargedCents: bigint().nullable(),
});
export type Stream = RecordOf<typeof STREAMS>;
/** A stream as its start makes it, before it is stored. */
export type NewStream = Omit<InsertOf<typeof STREAMS>, "script" | "nextDueAt">;

/** A brand and mode: what every stream, webhook and key of a request is scoped to. */
export interface StreamScope {
  brandId: string;
  mode: Mode;
}

/** A stock creator of the catalogue: stored, and answered, exactly as the contract's CreatorSummary. */
export type Creator = Schemas["CreatorSummary"];

export interface ApiKeyRecord {
  id: string;
  brandId: string;
  name: string;
  environment: Mode;
  scopes: Scope[];
  /** The key's last four characters, kept at creation (null for keys made before they were). */
  lastFour: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

export interface Webhook {
  id: string;
  brandId: string;
  mode: Mode;
  url: string;
  events: EventType[];
  secret: string;
  createdAt: Date;
}

/** Something that happened to a stream, told to the webhooks subscribed to its type: the stream as it was right after. */
export interface StreamEvent {
  /** `evt_…`: the id receivers deduplicate on. */
  id: string;
  type: EventType;
  stream: Stream;
  createdAt: Date;
}

/** One delivery of one event to one webhook, with its retry state. */
export interface WebhookDelivery {
  id: string;
  webhookId: string;
  /** The event's `evt_…` id. */
  eventId: string;
  eventType: EventType;
  /** Attempts made so far. */
  attempt: number;
  status: DeliveryStatus;
  /** HTTP status of the last attempt; null before the first or when no response came. */
  responseStatus: number | null;
  /** Why the last attempt failed; null otherwise. */
  error: string | null;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  createdAt: Date;
}
