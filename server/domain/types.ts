import { type components, scopeValues, streamStatusValues } from "../../generated/api.ts";
import { bigint, bool, type InsertOf, int, list, type RecordOf, table, text, time } from "./table.ts";

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

/** A brand: its plan, wallet and limits. */
export const BRANDS = table("brands", {
  id: text(),
  name: text(),
  vertical: text<Vertical>(),
  plan: text<Plan>(),
  creditsCents: bigint(),
  creditsHeldCents: bigint(),
  planMinutes: int(),
  minutesUsed: int(),
  rateLimitPerMinute: int(),
  maxActiveStreams: int(),
  createdAt: time(),
});
export type Brand = RecordOf<typeof BRANDS>;

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

/**
 * A brand and mode, the tenancy: what every stream, webhook and key of a request belongs to.
 * ("Scope" names a key's permission only, `Scope` above.)
 */
export interface Tenancy {
  brandId: string;
  mode: Mode;
}

/** @deprecated The tenancy's former name, kept while services/ and store/ move to `Tenancy`. */
export type StreamScope = Tenancy;

/** A stock creator of the catalogue: stored, and answered, exactly as the contract's CreatorSummary. */
export type Creator = Schemas["CreatorSummary"];

/** An API key, as listed: the key itself is never stored, only its hash. */
export const API_KEYS = table("api_keys", {
  id: text(),
  brandId: text(),
  name: text(),
  environment: text<Mode>(),
  scopes: list<Scope>(),
  /** SHA-256 of the full key, hex. */
  keyHash: text().writeOnly(),
  /** The key's last four characters, kept at creation (null for keys made before they were). */
  lastFour: text().nullable(),
  createdAt: time(),
  expiresAt: time().nullable(),
  revokedAt: time().nullable().defaulted(),
});
export type ApiKeyRecord = RecordOf<typeof API_KEYS>;

export const WEBHOOKS = table("webhooks", {
  id: text(),
  brandId: text(),
  mode: text<Mode>(),
  url: text(),
  events: list<EventType>(),
  secret: text(),
  createdAt: time(),
});
export type Webhook = RecordOf<typeof WEBHOOKS>;

/** Something that happened to a stream, told to the webhooks subscribed to its type: the stream as it was right after. */
export interface StreamEvent {
  /** `evt_…`: the id receivers deduplicate on. */
  id: string;
  type: EventType;
  stream: Stream;
  createdAt: Date;
}

/** One delivery of one event to one webhook, with its retry state. */
export const WEBHOOK_DELIVERIES = table("webhook_deliveries", {
  id: text(),
  webhookId: text(),
  /** The event's `evt_…` id. */
  eventId: text(),
  /** The event's type (store/deliveries.ts joins the event). */
  eventType: text<EventType>().computed(),
  /** Attempts made so far. */
  attempt: int(),
  status: text<DeliveryStatus>(),
  /** HTTP status of the last attempt; null before the first or when no response came. */
  responseStatus: int().nullable(),
  /** Why the last attempt failed; null otherwise. */
  error: text().nullable(),
  nextAttemptAt: time().nullable(),
  lastAttemptAt: time().nullable(),
  createdAt: time(),
});
export type WebhookDelivery = RecordOf<typeof WEBHOOK_DELIVERIES>;

/** One attempt at a delivery. */
export const WEBHOOK_ATTEMPTS = table("webhook_attempts", {
  deliveryId: text().writeOnly(),
  /** The series of the attempt: 0 from the event, one more each time the delivery is sent again. */
  series: int(),
  attempt: int(),
  attemptedAt: time(),
  /** The signature's `t`. */
  signatureT: bigint(),
  responseStatus: int().nullable(),
  /** The start of the receiver's answer (1 KiB at most), as text; null when it gave none. */
  responseBody: text().nullable(),
  error: text().nullable(),
  durationMs: int().nullable(),
  /** What asked for the attempt's series, on its first attempt: `retry`, `recover`, `operator`; null otherwise. */
  trigger: text().nullable(),
  requestedBy: text().nullable(),
});
export type DeliveryAttempt = RecordOf<typeof WEBHOOK_ATTEMPTS>;

/** The provider's room of a stream, and what is known of its agent. */
export const PROVIDER_ROOMS = table("provider_rooms", {
  streamId: text(),
  brandId: text(),
  roomName: text(),
  agentIdentity: text().nullable().defaulted(),
  agentJoinedAt: time().nullable().defaulted(),
  agentLeftAt: time().nullable().defaulted(),
  /** When the sweeper next asks the provider about the room. */
  checkAt: time().writeOnly(),
});
export type ProviderRoom = RecordOf<typeof PROVIDER_ROOMS>;

/** A dashboard member: one email's membership of one brand. */
export const MEMBERS = table("members", {
  id: text(),
  brandId: text(),
  email: text(),
  role: text<Role>(),
  passwordHash: text(),
  totpSecret: text().nullable().defaulted(),
  totpPending: text().nullable().defaulted(),
  /** The last TOTP time step accepted: a code is used once. */
  totpLastStep: bigint().nullable().defaulted().writeOnly(),
  createdAt: time(),
  lastSignInAt: time().nullable().defaulted(),
  removedAt: time().nullable().defaulted().writeOnly(),
});
export type Member = RecordOf<typeof MEMBERS>;

export const INVITATIONS = table("invitations", {
  id: text(),
  brandId: text(),
  email: text(),
  role: text<Role>(),
  tokenHash: text().writeOnly(),
  /** The owner who made it; null when the operator did. */
  invitedBy: text().nullable().writeOnly(),
  createdAt: time(),
  expiresAt: time(),
  usedAt: time().nullable().defaulted(),
  revokedAt: time().nullable().defaulted(),
});
export type Invitation = RecordOf<typeof INVITATIONS>;

/** A dashboard session; its cookie is stored only as `id_hash`. */
export const DASHBOARD_SESSIONS = table("dashboard_sessions", {
  idHash: text().writeOnly(),
  /** The session's name in the API (`session_id`): never its cookie or the cookie's hash. */
  publicId: text(),
  memberId: text(),
  csrfToken: text(),
  createdAt: time(),
  lastSeenAt: time(),
  expiresAt: time(),
  /** The browser's User-Agent at sign-in; null when it sent none or the session predates it. */
  userAgent: text().nullable(),
  /** The client address it was last seen from; null for sessions begun before addresses were kept. */
  address: text().nullable(),
});
export type SessionRecord = RecordOf<typeof DASHBOARD_SESSIONS>;

export const AUDIT_LOG = table("audit_log", {
  id: text(),
  brandId: text(),
  at: time(),
  actor: text(),
  memberId: text().nullable(),
  /** The client address of the request that made the change; null in entries written before it was kept. */
  address: text().nullable(),
  action: text<AuditAction>(),
  mode: text<Mode>().nullable(),
  targetId: text().nullable(),
  /** What the target was called then (a key's name, an email, a product, a device). */
  targetName: text().nullable(),
  detail: text(),
});
export type AuditEntry = RecordOf<typeof AUDIT_LOG>;

/** A link to set a new password. */
export const PASSWORD_RESETS = table("password_resets", {
  id: text(),
  memberId: text(),
  tokenHash: text().writeOnly(),
  issuedBy: text(),
  /** The owner who issued it; null when the operator did. */
  issuerMemberId: text().nullable(),
  /** The reset also turns two-factor off (a member who lost the second factor too). */
  turnOffTwoFactor: bool(),
  createdAt: time(),
  expiresAt: time(),
});
export type PasswordReset = RecordOf<typeof PASSWORD_RESETS>;
