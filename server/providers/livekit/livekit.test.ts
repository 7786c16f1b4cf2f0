import { ParticipantInfo_State, TokenVerifier } from "livekit-server-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_TOKEN, manualClock, startTestServer, streamBody, type TestServer } from "../../../testkit/harness.ts";
import { LiveKitStandIn, participantInfo, signBody } from "../../../testkit/livekit-stand-in.ts";
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
  server = await startTestServer({
    provider,
    clock: manualClock(new Date()),
    config: { preparingTimeoutMs: PREPARING_TIMEOUT_MS },
  });
});
afterAll(async () => {
  await server.close();
  await standIn.stop();
});
afterEach(() => {
  for (const method of ["RoomService/CreateRoom", "AgentDispatchService/CreateDispatch"]) standIn.fault(method, null);
});

const brandOf = async (brandId: string) =>
  (await server.call("GET", `/admin/v1/brands/${brandId}`, { key: ADMIN_TOKEN })).body;
const streamOf = async (key: string, id: string) => (await server.call("GET", `/api/v1/streams/${id}`, { key })).body;
const eventsOf = async (streamId: string) =>
  (
    await server.db.query<{ type: string }>(
      "SELECT type FROM webhook_events WHERE stream_id = $1 ORDER BY created_at, type",
      [streamId],
    )
  ).map((row) => row.type);
const postWebhook = (signed: { body: string; authorization?: string }) =>
  server.call("POST", "/providers/livekit/webhook", {
    rawBody: signed.body,
    headers: {
      "content-type": "application/webhook+json",
      ...(signed.authorization ? { authorization: signed.authorization } : {}),
    },
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
  const delivered = await postWebhook(
    await standIn.signedWebhook("participant_joined", { roomName, participant, at: server.clock() }),
  );
  expect(delivered.status).toBe(204);
  return participant;
}

describe("LiveKit provider against the stand-in: a live stream's lifecycle", () => {
  it("creates the room and dispatches the agent with the stream's metadata, answers the room's URL and a subscribe-only viewer token", async () => {
    const { key } = await liveTenant();
    const created = await start(key, { script: "Open with the sole, then the price.", duration_minutes: 30 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: "preparing",
      agent_dispatched: true,
      dispatch_method: "explicit",
      ws_url: standIn.url.replace(/^http/, "ws"),
    });
    expect(created.body).not.toHaveProperty("test");
    const { stream_id: streamId, room_name: roomName } = created.body;

    const metadata = {
      stream_id: streamId,
      creator_id: streamBody().creator_id,
      product_name: "Summer sneakers drop",
      platform: "youtube",
      vertical: "live-commerce",
      script: "Open with the sole, then the price.",
      duration_minutes: 30,
    };
    const [createRoom] = standIn.callsOf("RoomService/CreateRoom").filter((call) => call.body.name === roomName);
    expect(createRoom!.grants.video).toMatchObject({ roomCreate: true });
    expect(JSON.parse(createRoom!.body.metadata)).toEqual(metadata);
    const dispatch = standIn.dispatches.find((candidate) => candidate.room === roomName);
    expect(dispatch).toMatchObject({ agentName: AGENT_NAME });
    expect(JSON.parse(dispatch!.metadata)).toEqual(metadata);
    expect(
      standIn.callsOf("AgentDispatchService/CreateDispatch").find((call) => call.body.room === roomName)!.grants.video,
    ).toMatchObject({ roomAdmin: true, room: roomName });

    const claims = await new TokenVerifier(standIn.apiKey, standIn.apiSecret).verify(created.body.viewer_token);
    expect(claims.video).toEqual({
      room: roomName,
      roomJoin: true,
      canSubscribe: true,
      canPublish: false,
      canPublishData: false,
      canUpdateOwnMetadata: false,
    });
    expect(claims.exp! - claims.nbf!).toBeGreaterThanOrEqual(30 * 60 + PREPARING_TIMEOUT_MS / 1000);
    await expect(
      new TokenVerifier(standIn.apiKey, "another secret").verify(created.body.viewer_token),
    ).rejects.toThrow();
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
    expect(
      (
        await postWebhook(
          await standIn.signedWebhook("participant_joined", { roomName, participant: viewer, at: joinedAt }),
        )
      ).status,
    ).toBe(204);
    expect((await streamOf(key, streamId)).status).toBe("preparing");

    await agentJoins(roomName);
    const live = await streamOf(key, streamId);
    expect(live).toMatchObject({ status: "live", started_at: joinedAt.toISOString() });
    expect(await eventsOf(streamId)).toEqual(["stream.started"]);

    server.clock.advance(2 * 60_000 + 5_000); // 2 min 5 s live → 3 billed minutes
    const ended = await server.call("DELETE", `/api/v1/streams/${streamId}`, { key });
    expect(ended.status).toBe(200);
    expect(standIn.rooms.has(roomName)).toBe(false);
    expect(
      standIn.callsOf("RoomService/DeleteRoom").find((call) => call.body.room === roomName)!.grants.video,
    ).toMatchObject({ roomCreate: true });
    expect(await brandOf(brandId)).toMatchObject({
      credits_cents: 10_000 - 90,
      credits_held_cents: 0,
      minutes_used: 3,
    });
    expect(await eventsOf(streamId)).toEqual(["stream.started", "stream.ended"]);

    // What LiveKit says after the deletion (the agent leaving, the room finishing) changes nothing.
    server.clock.advance(1_000);
    const gone = participantInfo("agent-AJ_1", { at: joinedAt, state: ParticipantInfo_State.DISCONNECTED });
    expect(
      (
        await postWebhook(
          await standIn.signedWebhook("participant_left", { roomName, participant: gone, at: server.clock() }),
        )
      ).status,
    ).toBe(204);
    await postWebhook(await standIn.signedWebhook("room_finished", { roomName, at: server.clock() }));
    expect(await streamOf(key, streamId)).toMatchObject({ status: "ended", ended_at: ended.body.ended_at });
    expect(await brandOf(brandId)).toMatchObject({
      credits_cents: 10_000 - 90,
      credits_held_cents: 0,
      minutes_used: 3,
    });
    expect(await eventsOf(streamId)).toEqual(["stream.started", "stream.ended"]);
  });
});

describe("LiveKit provider: the stream ends with the room or the agent", () => {
  it("room_finished ends a live stream at the room's end, billing to the minute, and the room is not deleted again", async () => {
    const { brandId, key } = await liveTenant();
    const { stream_id: streamId, room_name: roomName } = (await start(key, { duration_minutes: 30 })).body;
    server.clock.advance(3_000);
    await agentJoins(roomName);
    server.clock.advance(10 * 60_000);
    standIn.finishRoom(roomName);
    expect(
      (await postWebhook(await standIn.signedWebhook("room_finished", { roomName, at: server.clock() }))).status,
    ).toBe(204);

    // LiveKit dates its events in whole seconds: 9 min 59.x s live, billed as 10 minutes.
    const detail = await streamOf(key, streamId);
    expect(detail).toMatchObject({
      status: "ended",
      ended_at: new Date(Math.floor(server.clock().getTime() / 1000) * 1000).toISOString(),
    });
    expect(await brandOf(brandId)).toMatchObject({
      credits_cents: 10_000 - 300,
      credits_held_cents: 0,
      minutes_used: 10,
    });
    expect(await eventsOf(streamId)).toEqual(["stream.started", "stream.ended"]);
    await server.sweep();
    expect(standIn.callsOf("RoomService/DeleteRoom").filter((call) => call.body.room === roomName)).toHaveLength(0);
  });

  it("an agent that reconnects keeps the stream live; one that leaves for good ends it when it left", async () => {
    const { brandId, key } = await liveTenant();
    const { stream_id: streamId, room_name: roomName } = (await start(key, { duration_minutes: 30 })).body;
    server.clock.advance(3_000);
    await agentJoins(roomName, "agent-A");
    const startedAt = server.clock().getTime();

    server.clock.advance(60_000);
    let gone = standIn.leaves(roomName, "agent-A");
    await postWebhook(
      await standIn.signedWebhook("participant_left", { roomName, participant: gone, at: server.clock() }),
    );
    server.clock.advance(2_000);
    await agentJoins(roomName, "agent-A");
    server.clock.advance(CHECK_INTERVAL_MS + 1_000);
    await server.sweep();
    expect((await streamOf(key, streamId)).status).toBe("live");

    server.clock.advance(4 * 60_000);
    const leftAt = server.clock().getTime();
    gone = standIn.leaves(roomName, "agent-A");
    await postWebhook(
      await standIn.signedWebhook("participant_left", { roomName, participant: gone, at: server.clock() }),
    );
    // Until the next check the agent may still come back.
    expect((await streamOf(key, streamId)).status).toBe("live");
    server.clock.advance(CHECK_INTERVAL_MS);
    await server.sweep();
    const detail = await streamOf(key, streamId);
    expect(detail.status).toBe("ended");
    expect(new Date(detail.ended_at).getTime()).toBe(Math.floor(leftAt / 1000) * 1000);
    const minutes = Math.ceil((Math.floor(leftAt / 1000) * 1000 - startedAt) / 60_000);
    expect(await brandOf(brandId)).toMatchObject({
      credits_cents: 10_000 - 30 * minutes,
      credits_held_cents: 0,
      minutes_used: minutes,
    });
    // The next sweep deletes the room the agent left.
    await server.sweep();
    expect(standIn.rooms.has(roomName)).toBe(false);
  });

  it("ends by itself at duration_minutes and the sweeper deletes the room", async () => {
    const { brandId, key } = await liveTenant();
    const { stream_id: streamId, room_name: roomName } = (await start(key, { duration_minutes: 2 })).body;
    server.clock.advance(5_000);
    await agentJoins(roomName);
    server.clock.advance(2 * 60_000);
    await server.sweep();
    const detail = await streamOf(key, streamId);
    expect(detail.status).toBe("ended");
    expect(new Date(detail.ended_at).getTime() - new Date(detail.started_at).getTime()).toBe(2 * 60_000);
    expect(await brandOf(brandId)).toMatchObject({
      credits_cents: 10_000 - 60,
      credits_held_cents: 0,
      minutes_used: 2,
    });
    expect(standIn.rooms.has(roomName)).toBe(false);
    expect(standIn.callsOf("RoomService/DeleteRoom").filter((call) => call.body.room === roomName)).toHaveLength(1);
  });

  it("recovers a lost participant_joined: the sweeper's check of the room finds the agent, billing from when it joined", async () => {
    const { brandId, key } = await liveTenant();
    const { stream_id: streamId, room_name: roomName } = (await start(key, { duration_minutes: 30 })).body;
    server.clock.advance(4_000);
    const joinedAt = server.clock();
    standIn.agentJoins(roomName, { at: joinedAt }); // its webhook never arrives
    await server.sweep();
    expect((await streamOf(key, streamId)).status).toBe("preparing");

    server.clock.advance(CHECK_INTERVAL_MS);
    await server.sweep();
    const listed = standIn.callsOf("RoomService/ListParticipants").filter((call) => call.body.room === roomName);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed[0]!.grants.video).toMatchObject({ roomAdmin: true, room: roomName });
    expect(await streamOf(key, streamId)).toMatchObject({ status: "live", started_at: joinedAt.toISOString() });
    expect(await eventsOf(streamId)).toEqual(["stream.started"]);

    const sinceJoin = server.clock().getTime() - joinedAt.getTime();
    server.clock.advance(3 * 60_000 - sinceJoin);
    expect((await server.call("DELETE", `/api/v1/streams/${streamId}`, { key })).status).toBe(200);
    expect(await brandOf(brandId)).toMatchObject({
      credits_cents: 10_000 - 90,
      credits_held_cents: 0,
      minutes_used: 3,
    });
  });

  it("an agent that never joins: error after the preparing time-out, nothing billed, the room deleted", async () => {
    const { brandId, key } = await liveTenant();
    const { stream_id: streamId, room_name: roomName } = (await start(key, { duration_minutes: 20 })).body;
    expect(await brandOf(brandId)).toMatchObject({ credits_held_cents: 600 });
    server.clock.advance(PREPARING_TIMEOUT_MS - 1_000);
    await server.sweep();
    expect((await streamOf(key, streamId)).status).toBe("preparing");
    server.clock.advance(1_000);
    await server.sweep();
    expect(await streamOf(key, streamId)).toMatchObject({ status: "error", started_at: null });
    expect(await brandOf(brandId)).toMatchObject({ credits_cents: 10_000, credits_held_cents: 0, minutes_used: 0 });
    expect(await eventsOf(streamId)).toEqual(["stream.error"]);
    expect(standIn.rooms.has(roomName)).toBe(false);
  });
});

describe("LiveKit provider: failed launches answer 502 launch_failed", () => {
  async function expectLaunchFailed(brandId: string, key: string) {
    const created = await start(key, { duration_minutes: 20 });
    expect(created.status).toBe(502);
    expect(created.body.error.code).toBe("launch_failed");
    const id = /streams\/([0-9a-f-]{36})/.exec(created.body.error.message)![1]!;
    const detail = await streamOf(key, id);
    expect(detail.status).toBe("error");
    expect(detail.ended_at).not.toBeNull();
    expect(await brandOf(brandId)).toMatchObject({ credits_cents: 10_000, credits_held_cents: 0, minutes_used: 0 });
    expect(await eventsOf(id)).toEqual(["stream.error"]);
    return detail;
  }

  it("when room creation is refused, dispatching nothing", async () => {
    const { brandId, key } = await liveTenant();
    const dispatches = standIn.dispatches.length;
    standIn.fault("RoomService/CreateRoom", {
      refuse: { status: 503, code: "unavailable", msg: "no nodes available" },
    });
    await expectLaunchFailed(brandId, key);
    expect(standIn.dispatches).toHaveLength(dispatches);
  });

  it("when the dispatch is refused, deleting the room it created", async () => {
    const { brandId, key } = await liveTenant();
    standIn.fault("AgentDispatchService/CreateDispatch", {
      refuse: { status: 400, code: "invalid_argument", msg: "agent not found" },
    });
    const detail = await expectLaunchFailed(brandId, key);
    expect(standIn.rooms.has(detail.room_name)).toBe(false);
    expect(standIn.callsOf("RoomService/DeleteRoom").some((call) => call.body.room === detail.room_name)).toBe(true);
  });

  it("when the room service does not answer within the request time-out", async () => {
    const { brandId, key } = await liveTenant();
    standIn.fault("RoomService/CreateRoom", { hang: true });
    await expectLaunchFailed(brandId, key);
  });
});

describe("LiveKit provider: a test key never reaches LiveKit", () => {
  it("starts the test stream live at once with no room credentials and no call to LiveKit", async () => {
    const { key } = await server.tenant({ environment: "test" });
    const before = standIn.calls.length;
    const created = await start(key);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: "live", test: true, ws_url: null, viewer_token: null });
    expect(created.body).not.toHaveProperty("agent_dispatched");
    await server.sweep();
    expect(standIn.calls.length).toBe(before);
  });
});

describe("LiveKit webhooks: only authentic notifications change anything", () => {
  async function preparingStream() {
    const { key } = await liveTenant();
    const { stream_id: streamId, room_name: roomName } = (await start(key)).body;
    server.clock.advance(2_000);
    const participant = standIn.agentJoins(roomName, { identity: "agent-W", at: server.clock() });
    return { key, streamId, roomName, participant };
  }

  async function expectRefused(signed: { body: string; authorization?: string }, key: string, streamId: string) {
    const answer = await postWebhook(signed);
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe("unauthorized");
    expect(answer.headers.get("request-id")).toMatch(/^req_/);
    expect((await streamOf(key, streamId)).status).toBe("preparing");
  }

  it("refuses an unsigned notification", async () => {
    const { key, streamId, roomName, participant } = await preparingStream();
    const { body } = await standIn.signedWebhook("participant_joined", { roomName, participant, at: server.clock() });
    await expectRefused({ body }, key, streamId);
    await expectRefused({ body, authorization: "Bearer not-a-token" }, key, streamId);
  });

  it("refuses one signed with another secret (forged)", async () => {
    const { key, streamId, roomName, participant } = await preparingStream();
    await expectRefused(
      await standIn.signedWebhook("participant_joined", {
        roomName,
        participant,
        at: server.clock(),
        secret: "a-secret-the-attacker-made-up-0123456789",
      }),
      key,
      streamId,
    );
  });

  it("refuses a body altered after signing", async () => {
    const { key, streamId, roomName, participant } = await preparingStream();
    const signed = await standIn.signedWebhook("room_started", { roomName, at: server.clock() });
    const altered = await standIn.signedWebhook("participant_joined", { roomName, participant, at: server.clock() });
    await expectRefused({ body: altered.body, authorization: signed.authorization }, key, streamId);
    await expectRefused(
      { body: altered.body.replace("agent-W", "agent-X"), authorization: altered.authorization },
      key,
      streamId,
    );
  });

  it("refuses a stale notification replayed after its signature expired", async () => {
    const { key, streamId, roomName, participant } = await preparingStream();
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() - 10 * 60_000 });
    let captured;
    try {
      captured = await standIn.signedWebhook("participant_joined", { roomName, participant, at: server.clock() });
    } finally {
      vi.useRealTimers();
    }
    await expectRefused(captured, key, streamId);
  });

  it("applies a notification once: a replay within its validity, a duplicate or an older report changes nothing", async () => {
    const { key, streamId, roomName, participant } = await preparingStream();
    const joined = await standIn.signedWebhook("participant_joined", { roomName, participant, at: server.clock() });
    expect((await postWebhook(joined)).status).toBe(204);
    const live = await streamOf(key, streamId);
    expect(live.status).toBe("live");

    server.clock.advance(90_000);
    expect((await server.call("DELETE", `/api/v1/streams/${streamId}`, { key })).status).toBe(200);
    const ended = await streamOf(key, streamId);
    expect((await postWebhook(joined)).status).toBe(204);
    // The same event again under a fresh signature (LiveKit's retry) is still the same event.
    expect((await postWebhook({ body: joined.body, authorization: await signFresh(joined.body) })).status).toBe(204);
    expect(await streamOf(key, streamId)).toEqual(ended);
    expect(await eventsOf(streamId)).toEqual(["stream.started", "stream.ended"]);
  });

  it("ignores a departure older than the agent's latest join (out of order)", async () => {
    const { key, streamId, roomName, participant } = await preparingStream();
    const leftEarlier = await standIn.signedWebhook("participant_left", {
      roomName,
      participant,
      at: new Date(server.clock().getTime() - 1_000),
    });
    server.clock.advance(1_000);
    const rejoined = standIn.agentJoins(roomName, { identity: "agent-W", at: server.clock() });
    standIn.leaves(roomName, participant.identity);
    expect(
      (
        await postWebhook(
          await standIn.signedWebhook("participant_joined", { roomName, participant: rejoined, at: server.clock() }),
        )
      ).status,
    ).toBe(204);
    expect((await postWebhook(leftEarlier)).status).toBe(204);

    // When it does leave, the stream ends then, not at the stale departure.
    server.clock.advance(60_000);
    const leftAt = new Date(Math.floor(server.clock().getTime() / 1000) * 1000);
    const gone = standIn.leaves(roomName, "agent-W");
    await postWebhook(await standIn.signedWebhook("participant_left", { roomName, participant: gone, at: leftAt }));
    server.clock.advance(CHECK_INTERVAL_MS);
    await server.sweep();
    expect(await streamOf(key, streamId)).toMatchObject({ status: "ended", ended_at: leftAt.toISOString() });
  });
});

const signFresh = (body: string) => signBody(body, standIn.apiKey, standIn.apiSecret);
