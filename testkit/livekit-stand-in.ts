import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  AccessToken,
  AgentDispatch,
  type ClaimGrants,
  ParticipantInfo,
  ParticipantInfo_State,
  Room,
  TokenVerifier,
  WebhookEvent,
} from "livekit-server-sdk";

/**
 * A local stand-in for a LiveKit server, for tests without the internet. It speaks what the
 * official SDK speaks: Twirp JSON over HTTP at /twirp/livekit.RoomService/* and
 * /twirp/livekit.AgentDispatchService/*, each call checked like LiveKit checks it (a JWT signed
 * with the API secret, issued by the API key, carrying the grant that call needs), and recorded.
 * It sends webhooks the way LiveKit does: the event as protobuf JSON, `Authorization` holding a
 * token of the SDK's own AccessToken class with the body's SHA-256, valid for 5 minutes.
 */

export interface RecordedCall {
  service: "RoomService" | "AgentDispatchService";
  method: string;
  body: Record<string, any>;
  grants: ClaimGrants;
}

export interface StandInRoom {
  name: string;
  metadata: string;
  emptyTimeout: number;
  participants: ParticipantInfo[];
}

/** How the stand-in misbehaves for one method: refuse (a Twirp error) or hang (never answer). */
export type Fault = { refuse: { status: number; code: string; msg: string } } | { hang: true };

/** ParticipantInfo.Kind in LiveKit's protocol. */
const KIND = { STANDARD: 0, AGENT: 4 } as const;

/** The grant each call needs, as LiveKit's server checks it. */
const REQUIRED_GRANTS: Record<string, (grants: ClaimGrants, body: Record<string, any>) => boolean> = {
  "RoomService/CreateRoom": (g) => g.video?.roomCreate === true,
  "RoomService/DeleteRoom": (g) => g.video?.roomCreate === true,
  "RoomService/ListParticipants": (g, body) => g.video?.roomAdmin === true && g.video.room === body.room,
  "AgentDispatchService/CreateDispatch": (g, body) => g.video?.roomAdmin === true && g.video.room === body.room,
};

export class LiveKitStandIn {
  readonly apiKey = `API${randomBytes(6).toString("hex")}`;
  readonly apiSecret = randomBytes(24).toString("base64url");
  readonly calls: RecordedCall[] = [];
  readonly rooms = new Map<string, StandInRoom>();
  readonly dispatches: { id: string; room: string; agentName: string; metadata: string }[] = [];
  /** Calls refused because of their token (not recorded in `calls`). */
  readonly refusedAuth: string[] = [];
  private readonly faults = new Map<string, Fault>();
  private readonly hanging = new Set<ServerResponse>();
  private server: Server | undefined;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** Makes `method` (e.g. "RoomService/CreateRoom") fail until cleared with `fault(method, null)`. */
  fault(method: string, fault: Fault | null): void {
    if (fault) this.faults.set(method, fault);
    else this.faults.delete(method);
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((call) => `${call.service}/${call.method}` === method);
  }

  /** The dispatched agent connects to the room; returns the participant as LiveKit would list it. */
  agentJoins(
    roomName: string,
    { identity = `agent-${randomBytes(4).toString("hex")}`, at = new Date() }: { identity?: string; at?: Date } = {},
  ): ParticipantInfo {
    return this.join(roomName, identity, KIND.AGENT, at);
  }

  viewerJoins(
    roomName: string,
    { identity = `viewer-${randomBytes(4).toString("hex")}`, at = new Date() } = {},
  ): ParticipantInfo {
    return this.join(roomName, identity, KIND.STANDARD, at);
  }

  leaves(roomName: string, identity: string): ParticipantInfo {
    const room = this.room(roomName);
    const participant = room.participants.find((candidate) => candidate.identity === identity);
    if (!participant) throw new Error(`stand-in: ${identity} is not in ${roomName}`);
    room.participants = room.participants.filter((candidate) => candidate !== participant);
    return new ParticipantInfo({ ...participant, state: ParticipantInfo_State.DISCONNECTED });
  }

  /** The room closes on LiveKit's side (its departure time-out, say). */
  finishRoom(roomName: string): Room {
    const room = this.room(roomName);
    this.rooms.delete(roomName);
    return new Room({ name: room.name, metadata: room.metadata });
  }

  /** A webhook as LiveKit signs it: the body, and the Authorization header (a bare JWT). */
  async signedWebhook(
    event:
      | "participant_joined"
      | "participant_left"
      | "participant_connection_aborted"
      | "room_started"
      | "room_finished",
    {
      roomName,
      participant,
      at = new Date(),
      id = `EV_${randomBytes(8).toString("hex")}`,
      secret = this.apiSecret,
    }: { roomName: string; participant?: ParticipantInfo; at?: Date; id?: string; secret?: string },
  ): Promise<{ body: string; authorization: string }> {
    const webhookEvent = new WebhookEvent({
      id,
      createdAt: BigInt(Math.floor(at.getTime() / 1000)),
      room: new Room({ name: roomName, sid: `RM_${roomName}` }),
      ...(participant ? { participant } : {}),
    });
    // Set apart: the SDK's WebhookEvent class re-initialises `event` after the constructor.
    webhookEvent.event = event;
    const body = webhookEvent.toJsonString();
    return { body, authorization: await signBody(body, this.apiKey, secret) };
  }

  private join(roomName: string, identity: string, kind: number, at: Date): ParticipantInfo {
    const participant = participantInfo(identity, { kind, at });
    this.room(roomName).participants.push(participant);
    return participant;
  }

  private room(roomName: string): StandInRoom {
    const room = this.rooms.get(roomName);
    if (!room) throw new Error(`stand-in: no room ${roomName}`);
    return room;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const match = /^\/twirp\/livekit\.(RoomService|AgentDispatchService)\/(\w+)$/.exec(req.url ?? "");
    if (req.method !== "POST" || !match) return twirpError(res, 404, "bad_route", "no such method");
    const [, service, method] = match as unknown as [string, RecordedCall["service"], string];
    const name = `${service}/${method}`;
    let body: Record<string, any>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
    } catch {
      return twirpError(res, 400, "malformed", "body is not JSON");
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    let grants: ClaimGrants;
    try {
      if (!token) throw new Error("no token");
      grants = await new TokenVerifier(this.apiKey, this.apiSecret).verify(token);
    } catch {
      this.refusedAuth.push(name);
      return twirpError(res, 401, "unauthenticated", "invalid token");
    }
    const allowed = REQUIRED_GRANTS[name];
    if (!allowed) return twirpError(res, 404, "bad_route", `${name} is not served by the stand-in`);
    if (!allowed(grants, body)) return twirpError(res, 403, "permission_denied", "permissions denied");
    this.calls.push({ service, method, body, grants });

    const fault = this.faults.get(name);
    if (fault && "hang" in fault) {
      this.hanging.add(res);
      return;
    }
    if (fault) return twirpError(res, fault.refuse.status, fault.refuse.code, fault.refuse.msg);
    switch (name) {
      case "RoomService/CreateRoom": {
        const room = this.rooms.get(body.name) ?? {
          name: body.name,
          metadata: body.metadata ?? "",
          emptyTimeout: body.emptyTimeout ?? 0,
          participants: [],
        };
        this.rooms.set(body.name, room);
        return json(
          res,
          new Room({
            sid: `RM_${room.name}`,
            name: room.name,
            metadata: room.metadata,
            emptyTimeout: room.emptyTimeout,
          }).toJson(),
        );
      }
      case "RoomService/DeleteRoom":
        if (!this.rooms.delete(body.room)) return twirpError(res, 404, "not_found", "requested room does not exist");
        return json(res, {});
      case "RoomService/ListParticipants": {
        const room = this.rooms.get(body.room);
        if (!room) return twirpError(res, 404, "not_found", "requested room does not exist");
        return json(res, { participants: room.participants.map((participant) => participant.toJson()) });
      }
      case "AgentDispatchService/CreateDispatch": {
        if (!this.rooms.has(body.room)) return twirpError(res, 404, "not_found", "requested room does not exist");
        const dispatch = {
          id: `AD_${randomBytes(6).toString("hex")}`,
          room: body.room,
          agentName: body.agentName,
          metadata: body.metadata ?? "",
        };
        this.dispatches.push(dispatch);
        return json(res, new AgentDispatch(dispatch).toJson());
      }
    }
  }
}

/** A participant as LiveKit describes it in listings and webhooks; an agent unless `kind` says otherwise. */
export function participantInfo(
  identity: string,
  {
    kind = KIND.AGENT,
    at = new Date(),
    state = ParticipantInfo_State.ACTIVE,
  }: { kind?: number; at?: Date; state?: ParticipantInfo_State } = {},
): ParticipantInfo {
  return new ParticipantInfo({
    sid: `PA_${randomBytes(6).toString("hex")}`,
    identity,
    kind,
    state,
    joinedAt: BigInt(Math.floor(at.getTime() / 1000)),
    joinedAtMs: BigInt(at.getTime()),
  });
}

/** What LiveKit puts in a webhook's Authorization header: a 5-minute token carrying the body's SHA-256. */
export async function signBody(body: string, apiKey: string, apiSecret: string): Promise<string> {
  const token = new AccessToken(apiKey, apiSecret, { ttl: "5m" });
  token.sha256 = createHash("sha256").update(body).digest("base64");
  return token.toJwt();
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** Twirp's error shape; the SDK reads it only with exactly this content type. */
function twirpError(res: ServerResponse, status: number, code: string, msg: string): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ code, msg }));
}
