import { randomBytes } from "node:crypto";
import { type AgentProvider, type LaunchRequest, type LaunchResult, LaunchError } from "./agent-provider.ts";

/**
 * Dispatches no real agent: the "agent" joins `joinAfterMs` after launch. Room URLs use the
 * reserved `.invalid` domain so nobody mistakes them for a reachable room.
 */
export function simulatedAgentProvider({ joinAfterMs }: { joinAfterMs: number }): AgentProvider {
  return {
    simulated: true,
    async launch({ roomName, simTrigger, now }: LaunchRequest): Promise<LaunchResult> {
      if (simTrigger === "sim:launch-failed") throw new LaunchError("simulated launch failure (sim:launch-failed)");
      return {
        wsUrl: `wss://rooms.simulated.invalid/${roomName}`,
        viewerToken: `vt_${randomBytes(24).toString("base64url")}`,
        agentDispatched: true,
        dispatchMethod: "simulated",
        joinAt: simTrigger === "sim:never-joins" ? null : new Date(now.getTime() + joinAfterMs),
      };
    },
  };
}
