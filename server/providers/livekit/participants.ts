import { type ParticipantInfo, ParticipantInfo_State } from "livekit-server-sdk";
import type { AgentPresence } from "../agent-provider.ts";

/** ParticipantInfo.Kind.AGENT in LiveKit's protocol (the SDK does not export that enum). */
const AGENT_KIND = 4;

export function isAgent(participant: ParticipantInfo | undefined): participant is ParticipantInfo {
  return participant !== undefined && participant.kind === AGENT_KIND;
}

export function joinedAtOf(participant: ParticipantInfo): Date | null {
  if (participant.joinedAtMs > 0n) return new Date(Number(participant.joinedAtMs));
  if (participant.joinedAt > 0n) return new Date(Number(participant.joinedAt) * 1000);
  return null;
}

/** The host agent among a room's participants, if it is connected. */
export function agentAmong(participants: readonly ParticipantInfo[]): AgentPresence | null {
  const agent = participants.find(
    (participant) => isAgent(participant) && participant.state !== ParticipantInfo_State.DISCONNECTED,
  );
  return agent ? { identity: agent.identity, joinedAt: joinedAtOf(agent) } : null;
}
