/** Plain data shared by the domain, store and HTTP layers. Wire shapes come from generated/. */
export type Mode = "live" | "test";
export type StreamStatus = "preparing" | "live" | "ended" | "error";
export type Vertical = "live-commerce" | "igaming";
export type Plan = "free" | "starter" | "growth" | "enterprise";
export type Scope = "streams:read" | "streams:write" | "analytics:read" | "webhooks:write";
export type EventType = "stream.started" | "stream.ended" | "stream.error";
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

export interface Stream {
  id: string;
  brandId: string;
  mode: Mode;
  status: StreamStatus;
  creatorId: string;
  /** null when the creator is no longer in the catalogue. */
  creatorPublicId: string | null;
  productName: string;
  platform: string;
  vertical: Vertical;
  source: string;
  durationMinutes: number | null;
  roomName: string;
  wsUrl: string | null;
  viewerToken: string | null;
  agentDispatched: boolean | null;
  dispatchMethod: string | null;
  viewerCount: number;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  joinAt: Date | null;
  failAt: Date | null;
  timeoutAt: Date | null;
  simTrigger: SimTrigger | null;
  pricePerMinuteCents: number;
  holdCents: number;
  billedMinutes: number | null;
  chargedCents: number | null;
}
