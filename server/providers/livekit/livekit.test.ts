import { ParticipantInfo_State, TokenVerifier } from "livekit-server-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_TOKEN, manualClock, startTestServer, streamBody, type TestServer } from "../../testing/harness.ts";
import { LiveKitStandIn, participantInfo } from "../../testing/livekit-stand-in.ts";
import { liveKitAgentProvider } from "./provider.ts";

const AGENT_NAME = "lsh-host";
const CHECK_INTERVAL_MS = 10_000;
const PREPARING_TIMEOUT_MS = 300_000;

let standIn: LiveKitStandIn;
let server: TestServer;

beforeAll(async () => {
  standIn = await new LiveKitStandIn().start();
  const provider = liveKitAgentProvider({
    url: standIn.url.replace(/^http/, "ws"),
    apiKey: standIn.apiKey,
    apiSecret: standIn.apiSecret,
    agentName: AGENT_NAME,
    requestTimeoutMs: 500,
    checkIntervalMs: CHECK_INTERVAL_MS,
    preparingTimeoutMs: PREPARING_TIMEOUT_MS,
  });
  // The manual clock starts at the real time: LiveKit's webhook tokens are checked against it.
  server = await startTestServer({ provider, clock: manualClock(new Date()), config: { preparingTimeoutMs: PREPARING_TIMEOUT_MS } });
});
afterAll(async () => {
  await server.close();
  await standIn.stop();
});
afterEach(() => {
  for (const method of ["RoomService/CreateRoom", "AgentDispatchService/CreateDispatch"]) standIn.fault(method, null);
});

const brandOf = async (brandId: string) => (await server.call("GET", `/admin/v1/brands/${brandId}`, { key: ADMIN_TOKEN })).body;
const streamOf = async (key: string, id: string) => (await server.call("GET", `/api/v1/streams/${id}`, { key })).body;
const eventsOf = async (streamId: string) =>
  (await server.db.query<{ type: string }>("SELECT type FROM webhook_events WHERE stream_id = $1 ORDER BY created_at, type", [streamId])).map((row) => row.type);
const postWebhook = (signed: { body: string; authorization?: string }) =>
  server.call("POST", "/providers/livekit/webhook", {
    rawBody: signed.body,
    headers: { "content-type": "application/webhook+json", ...(signed.authorization ? { authorization: signed.authorization } : {}) },
  });

async function liveTenant(credits = 10_000) {
  return server.tenant({ environment: "live", credits_cents: credits });
}

async function start(key: string, overrides: Record<string, unknown> = {}) {
  const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody(overrides) });
  return created;
}

/** The agent joins the stream's room now, and LiveKit's participant_joined reaches the server. */
async function agentJoins(roomName: string, identity = "agent-AJ_1") {
  const participant = standIn.agentJoins(roomName, { identity, at: server.clock() });
  const delivered = await postWebhook(await standIn.signedWebhook("participant_joined", { roomName, participant, at: server.clock() }));
  expect(delivered.status).toBe(204);
  return participant;
}

describe("LiveKit provider against the stand-in: a live stream's lifecycle", () => {
  it("creates the room and dispatches the agent with the stream's metadata, answers the room's URL and a subscribe-only viewer token", async () => {
    const { key } = await liveTenant();
    const created = await start(key, { script: "Open with the sole, then the price.", duration_minutes: 30 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: "preparing", agent_dispatched: true, dispatch_method: "explicit", ws_url: standIn.url.replace(/^http/, "ws") });
    expect(created.body).not.toHaveProperty("test");
    const { stream_id: streamId, room_name: roomName } = created.body;

    const metadata = { stream_id: streamId, creator_id: streamBody().creator_id, product_name: "Summer sneakers drop", platform: "youtube", vertical: "live-commerce", script: "Open with the sole, then the price.", duration_minutes: 30 };
    const [createRoom] = standIn.callsOf("RoomService/CreateRoom").filter((call) => call.body.name === roomName);
    expect(createRoom!.grants.video).toMatchObject({ roomCreate: true });
    expect(JSON.parse(createRoom!.body.metadata)).toEqual(metadata);
    const dispatch = standIn.dispatches.find((candidate) => candidate.room === roomName);
    expect(dispatch).toMatchObject({ agentName: AGENT_NAME });
    expect(JSON.parse(dispatch!.metadata)).toEqual(metadata);
    expect(standIn.callsOf("AgentDispatchService/CreateDispatch").find((call) => call.body.room === roomName)!.grants.video).toMatchObject({ roomAdmin: true, room: roomName });

    const claims = await new TokenVerifier(standIn.apiKey, standIn.apiSecret).verify(created.body.viewer_token);
    expect(claims.video).toEqual({ room: roomName, roomJoin: true, canSubscribe: true, canPublish: false, canPublishData: false, canUpdateOwnMetadata: false });
    expect(claims.exp! - claims.nbf!).toBeGreaterThanOrEqual(30 * 60 + PREPARING_TIMEOUT_MS / 1000);
    await expect(new TokenVerifier(standIn.apiKey, "another secret").verify(created.body.viewer_token)).rejects.toThrow();
  });

  it("preparing → live on the agent's participant_joined → ended by DELETE, which deletes the room; billing the minutes live", async () => {
    const { brandId, key } = await liveTenant();
    const created = await start(key, { duration_minutes: 30 });
    const { stream_id: streamId, room_name: roomName } = created.body;
    expect(await brandOf(brandId)).toMatchObject({ credits_held_cents: 900 });

    server.clock.advance(4_000);
    const joinedAt = server.clock();
    standIn.viewerJoins(roomName);
    const viewer = standIn.rooms.get(roomName)!.participants[0]!;
    // A viewer joining is not the host: the stream stays preparing.
    expect((await postWebhook(await standIn.signedWebhook("participant_joined", { roomName, participant: viewer, at: joinedAt }))).status).toBe(204);
    expect((await streamOf(key, streamId)).status).toBe("preparing");

    await agentJoins(roomName);
    const live = await streamOf(key, streamId);
    expect(live).toMatchObject({ status: "live", started_at: joinedAt.toISOString() });
    expect(await eventsOf(streamId)).toEqual(["stream.started"]);

    server.clock.advance(2 * 60_000 + 5_000); // 2 min 5 s live → 3 billed minutes
    const ended = await server.call("DELETE", `/api/v1/streams/${streamId}`, { key });
    expect(ended.status).toBe(200);
    expect(standIn.rooms.has(roomName)).toBe(false);
    expect(standIn.callsOf("RoomService/DeleteRoom").find((call) => call.body.room === roomName)!.grants.video).toMatchObject({ roomCreate: true });
    expect(await brandOf(brandId)).toMatchObject({ credits_cents: 10_000 - 90, credits_held_cents: 0, minutes_used: 3 });
    expect(await eventsOf(streamId)).toEqual(["stream.started", "stream.ended"]);

    // What LiveKit says after the deletion (the agent leaving, the room finishing) changes nothing.
    server.clock.advance(1_000);
    const gone = participantInfo("agent-AJ_1", { at: joinedAt, state: ParticipantInfo_State.DISCONNECTED });
    expect((await postWebhook(await standIn.signedWebhook("participant_left", { roomName, participant: gone, at: server.clock() }))).status).toBe(204);
    await postWebhook(await standIn.signedWebhook("room_finished", { roomName, at: server.clock() }));
    expect(await streamOf(key, streamId)).toMatchObject({ status: "ended", ended_at: ended.body.ended_at });
    expect(await brandOf(brandId)).toMatchObject({ credits_cents: 10_000 - 90, credits_held_cents: 0, minutes_used: 3 });
    expect(await eventsOf(streamId)).toEqual(["stream.started", "stream.ended"]);
  });
});
