import { createHash } from "node:crypto";
import type { WebhookEvent } from "livekit-server-sdk";
import type { ProviderEvent } from "../agent-provider.ts";
import { isAgent, joinedAtOf } from "./participants.ts";

/**
 * A verified LiveKit webhook in the lifecycle's terms: the agent participant joining or leaving,
 * or the room finishing. Everything else (viewers, tracks, egress, room_started) is null.
 */
export function toProviderEvent(event: WebhookEvent, rawBody: string): ProviderEvent | null {
  const roomName = event.room?.name;
  if (!roomName) return null;
  // LiveKit gives every event an id; one without is named by its body, so a repeat is still seen.
  const id = event.id || `body_${createHash("sha256").update(rawBody).digest("base64url")}`;
  const at = event.createdAt > 0n ? new Date(Number(event.createdAt) * 1000) : null;
  const participant = event.participant;
  switch (event.event) {
    case "participant_joined":
      if (!isAgent(participant)) return null;
      return {
        id,
        roomName,
        at: joinedAtOf(participant) ?? at,
        kind: "agent_joined",
        agent: { identity: participant.identity, joinedAt: joinedAtOf(participant) },
      };
    case "participant_left":
      if (!isAgent(participant)) return null;
      return {
        id,
        roomName,
        at,
        kind: "agent_left",
        agent: { identity: participant.identity, joinedAt: joinedAtOf(participant) },
      };
    case "participant_connection_aborted":
      // It never got into the room: gone, but it did not join.
      if (!isAgent(participant)) return null;
      return { id, roomName, at, kind: "agent_left", agent: { identity: participant.identity, joinedAt: null } };
    case "room_finished":
      return { id, roomName, at, kind: "room_finished" };
    default:
      return null;
  }
}
