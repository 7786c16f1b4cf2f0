import { describe, expect, it } from "vitest";
import { applyTransition, dueTransition, nextDueAt } from "./lifecycle.ts";
import { emptyRecord } from "./table.ts";
import { STREAMS, type Stream } from "./types.ts";

const t = (seconds: number) => new Date(Date.UTC(2026, 10, 20, 12, 0, 0) + seconds * 1000);

const stream = (overrides: Partial<Stream>): Stream => ({
  ...emptyRecord(STREAMS),
  id: "6f1c2a52-0000-4000-8000-000000000001",
  brandId: "b",
  mode: "live",
  status: "preparing",
  creatorId: "avt_x",
  creatorPublicId: "avt_x",
  productName: "p",
  platform: "kick",
  vertical: "igaming",
  source: "api",
  durationMinutes: 10,
  roomName: "room",
  wsUrl: null,
  viewerToken: null,
  agentDispatched: true,
  dispatchMethod: "simulated",
  viewerCount: 0,
  createdAt: t(0),
  startedAt: null,
  endedAt: null,
  joinAt: t(3),
  failAt: null,
  timeoutAt: t(300),
  simTrigger: null,
  pricePerMinuteCents: 30,
  holdCents: 300,
  billedMinutes: null,
  chargedCents: null,
  ...overrides,
});

describe("stream lifecycle", () => {
  it("goes live when the agent joins, at the moment it joined", () => {
    expect(dueTransition(stream({}), t(2))).toBeNull();
    expect(dueTransition(stream({}), t(5))).toEqual({ to: "live", at: t(3) });
  });

  it("moves preparing to error at the time-out when the agent never joins", () => {
    const waiting = stream({ joinAt: null });
    expect(nextDueAt(waiting)).toEqual(t(300));
    expect(dueTransition(waiting, t(299))).toBeNull();
    expect(dueTransition(waiting, t(301))).toEqual({ to: "error", at: t(300) });
  });

  it("ends a live stream by itself duration_minutes after it went live", () => {
    const live = applyTransition(stream({}), { to: "live", at: t(3) }, { simAgentJoinMs: 3000 });
    expect(live.startedAt).toEqual(t(3));
    expect(nextDueAt(live)).toEqual(t(603));
    expect(dueTransition(live, t(700))).toEqual({ to: "ended", at: t(603) });
  });

  it("fails a sim:fails-live stream after it went live", () => {
    const live = applyTransition(
      stream({ simTrigger: "sim:fails-live" }),
      { to: "live", at: t(3) },
      { simAgentJoinMs: 3000 },
    );
    expect(dueTransition(live, t(10))).toEqual({ to: "error", at: t(6) });
  });

  it("has nothing due once a stream has ended", () => {
    expect(nextDueAt(stream({ status: "ended", startedAt: t(3), endedAt: t(60) }))).toBeNull();
  });
});
