import { describe, expect, it } from "vitest";
import { streamTimeline } from "./stream-timeline.ts";
import { emptyRecord } from "./table.ts";
import { STREAMS, type Stream } from "./types.ts";

const T0 = new Date("2026-11-20T12:00:00.000Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

function stream(overrides: Partial<Stream>): Stream {
  return {
    ...emptyRecord(STREAMS),
    id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
    brandId: "b",
    mode: "live",
    status: "preparing",
    creatorId: "avt_x",
    creatorPublicId: "avt_x",
    productName: "Aurora earbuds",
    platform: "youtube",
    vertical: "live-commerce",
    source: "dashboard",
    durationMinutes: 60,
    roomName: "room",
    wsUrl: null,
    viewerToken: null,
    agentDispatched: true,
    dispatchMethod: "simulated",
    viewerCount: 0,
    createdAt: T0,
    startedAt: null,
    endedAt: null,
    joinAt: null,
    failAt: null,
    timeoutAt: null,
    simTrigger: null,
    pricePerMinuteCents: 30,
    holdCents: 1800,
    billedMinutes: null,
    chargedCents: null,
    ...overrides,
  };
}

const started = { id: "evt_1", type: "stream.started" as const, createdAt: at(3) };
const ended = { id: "evt_2", type: "stream.ended" as const, createdAt: at(304) };

/** The entries as one line each, for reading the order at a glance. */
const lines = (timeline: ReturnType<typeof streamTimeline>) =>
  timeline.entries.map((entry) => {
    const seconds = (entry.at.getTime() - T0.getTime()) / 1000;
    if (entry.kind === "status") return `${seconds} status ${entry.status}`;
    if (entry.kind === "event") return `${seconds} event ${entry.eventType}`;
    return `${seconds} ${entry.action} ${entry.amountCents}${entry.minutes === null ? "" : ` for ${entry.minutes} min`}`;
  });

describe("streamTimeline", () => {
  it("tells a live-mode stream's life: hold, live, end, charge and release, with its events", () => {
    const timeline = streamTimeline(
      stream({ status: "ended", startedAt: at(3), endedAt: at(304), billedMinutes: 6, chargedCents: 180 }),
      [started, ended],
      at(400),
      20,
    );
    expect(lines(timeline)).toEqual([
      "0 status preparing",
      "0 hold 1800 for 60 min",
      "3 status live",
      "3 event stream.started",
      "304 status ended",
      "304 charge 180 for 6 min",
      "304 release 1800",
      "304 event stream.ended",
    ]);
    expect(timeline.durationSeconds).toBe(301);
    expect(timeline.billing).toEqual({
      billed: true,
      pricePerMinuteCents: 30,
      holdCents: 1800,
      billedMinutes: 6,
      chargedCents: 180,
      settled: true,
    });
  });

  it("gives a live stream's minutes and charge so far, as ending it now would bill them", () => {
    const timeline = streamTimeline(stream({ status: "live", startedAt: at(3) }), [started], at(3 + 60 * 7 + 1), 20);
    expect(timeline.durationSeconds).toBe(421);
    expect(timeline.billing).toMatchObject({ billedMinutes: 8, chargedCents: 240, settled: false });
    expect(lines(timeline)).toEqual([
      "0 status preparing",
      "0 hold 1800 for 60 min",
      "3 status live",
      "3 event stream.started",
    ]);
  });

  it("never charges more than the hold", () => {
    const timeline = streamTimeline(
      stream({ status: "live", startedAt: at(0), durationMinutes: 1, holdCents: 30 }),
      [],
      at(600),
      20,
    );
    expect(timeline.billing).toMatchObject({ billedMinutes: 10, chargedCents: 30 });
  });

  it("releases the hold untouched of a stream that never went live", () => {
    const timeline = streamTimeline(
      stream({ status: "error", endedAt: at(300) }),
      [{ id: "evt_3", type: "stream.error", createdAt: at(300) }],
      at(400),
      20,
    );
    expect(lines(timeline)).toEqual([
      "0 status preparing",
      "0 hold 1800 for 60 min",
      "300 status error",
      "300 release 1800",
      "300 event stream.error",
    ]);
    expect(timeline.durationSeconds).toBeNull();
    expect(timeline.billing).toMatchObject({ billedMinutes: null, chargedCents: null, settled: true });
  });

  it("shows a test-mode stream live at once and never billed", () => {
    const test = { mode: "test" as const, pricePerMinuteCents: 0, holdCents: 0, durationMinutes: null };
    const timeline = streamTimeline(
      stream({ ...test, status: "ended", startedAt: T0, endedAt: at(421) }),
      [
        { ...started, createdAt: T0 },
        { ...ended, createdAt: at(421) },
      ],
      at(500),
      20,
    );
    expect(lines(timeline)).toEqual([
      "0 status live",
      "0 event stream.started",
      "421 status ended",
      "421 event stream.ended",
    ]);
    expect(timeline.billing).toEqual({
      billed: false,
      pricePerMinuteCents: 0,
      holdCents: 0,
      billedMinutes: null,
      chargedCents: null,
      settled: false,
    });
    expect(timeline.durationSeconds).toBe(421);
    // A launch that failed: created in error, once.
    const failed = streamTimeline(stream({ ...test, status: "error", endedAt: T0 }), [], at(1), 20);
    expect(lines(failed)).toEqual(["0 status error"]);
  });

  it("keeps at most the contract's number of entries, the oldest", () => {
    const many = Array.from({ length: 30 }, (_, index) => ({
      ...started,
      id: `evt_${index}`,
      createdAt: at(10 + index),
    }));
    const timeline = streamTimeline(stream({ status: "live", startedAt: at(3) }), many, at(100), 20);
    expect(timeline.entries).toHaveLength(20);
    expect(lines(timeline).slice(0, 3)).toEqual(["0 status preparing", "0 hold 1800 for 60 min", "3 status live"]);
  });
});
