import type { Mode, SimTrigger, Vertical } from "../domain/types.ts";

export interface LaunchRequest {
  streamId: string;
  roomName: string;
  mode: Mode;
  simTrigger: SimTrigger | null;
  now: Date;
  /** What the host agent needs to run the stream (a real provider hands it to the agent). */
  creatorId: string;
  productName: string;
  platform: string;
  vertical: Vertical;
  script: string | null;
  durationMinutes: number | null;
}

export interface LaunchResult {
  wsUrl: string | null;
  viewerToken: string | null;
  agentDispatched: boolean;
  dispatchMethod: string | null;
  /** When the agent will have joined the room, if known in advance; null if it reports later or never. */
  joinAt: Date | null;
}

/** Where a provider reports the failures its callers do not (pino's logger is one). */
export interface ProviderLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** Room creation or agent dispatch failed; the stream is kept in status error (502 launch_failed). */
export class LaunchError extends Error {
  override name = "LaunchError";
}

/** Creates the real-time room and dispatches the AI host into it. */
export interface AgentProvider {
  /** Simulated providers honour the `sim:` triggers; real ones never do. */
  readonly simulated: boolean;
  launch(request: LaunchRequest): Promise<LaunchResult>;
  /** Real providers only: the room service, asked when the provider's notifications may have been lost. */
  readonly rooms?: RoomService;
  /** Real providers only: the provider's signed notifications (POST /providers/{name}/webhook). */
  readonly webhooks?: ProviderWebhooks;
}

/** The agent as the room service lists it. */
export interface AgentPresence {
  identity: string;
  joinedAt: Date | null;
}

/** What the room service says of a room: gone, or open with the host agent in it or not. */
export type RoomState = { exists: false } | { exists: true; agent: AgentPresence | null };

export interface RoomService {
  /**
   * How long the provider's news of a room is trusted before the room service is asked: the
   * grace after a launch, between checks of an active stream, and for an agent to come back.
   */
  readonly checkIntervalMs: number;
  inspect(roomName: string): Promise<RoomState>;
  /** Deletes the room (disconnecting everyone in it); a room already gone counts as deleted. */
  close(roomName: string): Promise<void>;
}

/**
 * A provider notification in the terms of the stream lifecycle. `id` is the provider's event id
 * (duplicates are ignored); `at` is when the provider says it happened (null when it does not say).
 */
export type ProviderEvent = { id: string; roomName: string; at: Date | null } & (
  | { kind: "agent_joined"; agent: AgentPresence }
  | { kind: "agent_left"; agent: AgentPresence }
  | { kind: "room_finished" }
);

export interface ProviderWebhooks {
  /** The path segment: notifications arrive at POST /providers/{name}/webhook. */
  readonly name: string;
  /**
   * Verifies a notification on its raw body and translates it: null for events the lifecycle
   * does not need. Throws WebhookRejected when it is not authentic (unsigned, forged, stale,
   * body altered) or cannot be read.
   */
  receive(rawBody: string, authorization: string | undefined): Promise<ProviderEvent | null>;
}

/** A provider notification that failed verification; answered 401 and never applied. */
export class WebhookRejected extends Error {
  override name = "WebhookRejected";
}
