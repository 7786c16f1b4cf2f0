import type { Mode, SimTrigger } from "../domain/types.ts";

export interface LaunchRequest {
  streamId: string;
  roomName: string;
  mode: Mode;
  simTrigger: SimTrigger | null;
  now: Date;
}

export interface LaunchResult {
  wsUrl: string | null;
  viewerToken: string | null;
  agentDispatched: boolean;
  dispatchMethod: string | null;
  /** When the agent will have joined the room, if known in advance; null if it reports later or never. */
  joinAt: Date | null;
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
}
