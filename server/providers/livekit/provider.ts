import { AccessToken, AgentDispatchClient, RoomServiceClient, ServerError, WebhookReceiver } from "livekit-server-sdk";
import { MAX_DURATION_MINUTES } from "../../domain/lifecycle.ts";
import type { LiveKitConfig } from "../../config.ts";
import {
  type AgentProvider,
  type LaunchRequest,
  type LaunchResult,
  LaunchError,
  type ProviderLog,
  type RoomState,
  WebhookRejected,
} from "../agent-provider.ts";
import { agentMetadata } from "./metadata.ts";
import { agentAmong } from "./participants.ts";
import { toProviderEvent } from "./webhook-events.ts";

export interface LiveKitSettings extends LiveKitConfig {
  /** The preparing time-out: the room waits this long (and a minute more) for its first participant. */
  preparingTimeoutMs: number;
}

/** Viewer tokens stay valid this long beyond the stream's planned end, for a late or resumed start. */
const VIEWER_TOKEN_MARGIN_SECONDS = 15 * 60;

/** The same server as a WebSocket URL (what room clients connect to) and as an HTTP URL (the room service API). */
export function liveKitUrls(url: string): { wsUrl: string; apiUrl: string } {
  const trimmed = url.replace(/\/+$/, "");
  return { wsUrl: trimmed.replace(/^http/, "ws"), apiUrl: trimmed.replace(/^ws/, "http") };
}

/**
 * The LiveKit agent provider: a live stream's room is created on the LiveKit server, the named
 * agent is dispatched into it explicitly, and viewers get a subscribe-only token. The agent
 * joining and leaving is learnt from LiveKit's webhooks and, when those are lost, by asking the
 * room service (RoomService.inspect). Never honours the `sim:` triggers.
 */
export function liveKitAgentProvider(
  settings: LiveKitSettings,
  { logger }: { logger?: ProviderLog } = {},
): AgentProvider {
  const { wsUrl, apiUrl } = liveKitUrls(settings.url);
  // Region failover is off: it would retry each call up to three times against other regions,
  // holding POST /streams far beyond the time-out; a failed launch is a 502 the caller can retry.
  const options = { requestTimeout: settings.requestTimeoutMs / 1000, failover: false };
  const roomService = new RoomServiceClient(apiUrl, settings.apiKey, settings.apiSecret, options);
  const dispatchService = new AgentDispatchClient(apiUrl, settings.apiKey, settings.apiSecret, options);
  const receiver = new WebhookReceiver(settings.apiKey, settings.apiSecret);

  async function step<T>(what: string, request: LaunchRequest, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      logger?.warn({ stream_id: request.streamId, step: what, error: describeFailure(error) }, "livekit launch failed");
      throw new LaunchError(`LiveKit ${what} failed: ${describeFailure(error)}`);
    }
  }

  /** Logged here, as the callers leave the room to the next check and say nothing. */
  function roomServiceFailed(method: string, roomName: string, error: unknown): Error {
    logger?.warn(
      { method, room_name: roomName, error: describeFailure(error) },
      "livekit room service call failed; retried at the next check",
    );
    return error instanceof Error ? error : new Error(String(error));
  }

  return {
    simulated: false,

    async launch(request: LaunchRequest): Promise<LaunchResult> {
      const metadata = agentMetadata(request);
      await step("room creation", request, () =>
        roomService.createRoom({
          name: request.roomName,
          metadata,
          emptyTimeout: Math.ceil(settings.preparingTimeoutMs / 1000) + 60,
        }),
      );
      await step("agent dispatch", request, () =>
        dispatchService.createDispatch(request.roomName, settings.agentName, { metadata }),
      );
      return {
        wsUrl,
        viewerToken: await viewerToken(settings, request),
        agentDispatched: true,
        dispatchMethod: "explicit",
        joinAt: null,
      };
    },

    rooms: {
      checkIntervalMs: settings.checkIntervalMs,
      async inspect(roomName: string): Promise<RoomState> {
        try {
          const participants = await roomService.listParticipants(roomName);
          return { exists: true, agent: agentAmong(participants) };
        } catch (error) {
          if (isNotFound(error)) return { exists: false };
          throw roomServiceFailed("ListParticipants", roomName, error);
        }
      },
      async close(roomName: string): Promise<void> {
        try {
          await roomService.deleteRoom(roomName);
        } catch (error) {
          if (!isNotFound(error)) throw roomServiceFailed("DeleteRoom", roomName, error);
        }
      },
    },

    webhooks: {
      name: "livekit",
      async receive(rawBody: string, authorization: string | undefined) {
        let event;
        try {
          event = await receiver.receive(rawBody, authorization);
        } catch (error) {
          throw new WebhookRejected(error instanceof Error ? error.message : "verification failed");
        }
        return toProviderEvent(event, rawBody);
      },
    },
  };
}

/**
 * A subscribe-only grant for the stream's room: viewers watch and listen, never publish media or
 * data, never change their metadata. Valid for the planned duration plus the preparing time-out
 * and a margin. One identity per stream: LiveKit admits one connection per identity at a time.
 */
async function viewerToken(settings: LiveKitSettings, request: LaunchRequest): Promise<string> {
  const minutes = request.durationMinutes ?? MAX_DURATION_MINUTES;
  const ttlSeconds = minutes * 60 + Math.ceil(settings.preparingTimeoutMs / 1000) + VIEWER_TOKEN_MARGIN_SECONDS;
  const token = new AccessToken(settings.apiKey, settings.apiSecret, {
    identity: `viewer-${request.streamId}`,
    name: "viewer",
    ttl: ttlSeconds,
  });
  token.addGrant({
    room: request.roomName,
    roomJoin: true,
    canSubscribe: true,
    canPublish: false,
    canPublishData: false,
    canUpdateOwnMetadata: false,
  });
  return token.toJwt();
}

/** LiveKit answers 404 not_found for a room that does not exist (any longer). */
function isNotFound(error: unknown): boolean {
  return error instanceof ServerError && (error.status === 404 || error.code === "not_found");
}

/** The status and code of a room service refusal, or the transport failure: never a token or secret. */
function describeFailure(error: unknown): string {
  if (error instanceof ServerError)
    return `${error.status} ${error.code ?? ""} ${error.message}`.replace(/\s+/g, " ").trim();
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return "timed out";
  if (error instanceof Error)
    return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
  return String(error);
}
