import { describe, expect, it } from "vitest";
import { DatabaseError } from "../store/database.ts";
import { capturedLogs } from "../../testkit/log-capture.ts";
import { backgroundFailure, createObservability, observedSweep } from "./observability.ts";

/** An observability whose outage messages run on a clock the test moves. */
function observed() {
  const logs = capturedLogs();
  let now = 1_000_000;
  const observability = createObservability({ logger: logs.logger, now: () => now });
  return { observability, logs, advance: (ms: number) => (now += ms) };
}

const refused = () =>
  new DatabaseError("connect ECONNREFUSED 127.0.0.1:5432", new Error("connect ECONNREFUSED 127.0.0.1:5432"));

describe("a database outage in the log", () => {
  it("is one error when it starts, a reminder at most every 30 s while it lasts, one line when it ends", () => {
    const { observability, logs, advance } = observed();
    const sweepFailed = backgroundFailure(observability, "lifecycle sweep");
    const deliveryFailed = backgroundFailure(observability, "webhook delivery");

    // Both jobs fail every second for 65 s.
    for (let second = 0; second < 65; second += 1) {
      sweepFailed(refused());
      deliveryFailed(refused());
      advance(1_000);
    }
    expect(observability.outage.down).toBe(true);
    expect(logs.take()).toMatchObject([
      {
        level: "error",
        msg: "database unreachable",
        source: "lifecycle sweep",
        cause: "connect ECONNREFUSED 127.0.0.1:5432",
      },
      { level: "warn", msg: "database still unreachable", down_for_s: 30, failures: 61 },
      { level: "warn", msg: "database still unreachable", down_for_s: 60, failures: 121 },
    ]);

    observability.outage.recovered();
    expect(logs.take()).toMatchObject([
      { level: "info", msg: "database reachable again", outage_s: 65, failures: 130 },
    ]);
    // Recovery is said once; the next outage starts afresh.
    observability.outage.recovered();
    sweepFailed(refused());
    expect(logs.take().map((entry) => entry.msg)).toEqual(["database unreachable"]);
  });

  it("ends when a sweep succeeds, the sweep every tick of the running server makes", async () => {
    const { observability, logs, advance } = observed();
    let failing = true;
    const sweep = observedSweep(observability, async () => {
      if (failing) throw refused();
      return 0;
    });
    const report = backgroundFailure(observability, "lifecycle sweep");
    for (let tick = 0; tick < 5; tick += 1) {
      await sweep().catch(report);
      advance(1_000);
    }
    failing = false;
    await sweep();
    await sweep();
    expect(logs.take().map((entry) => [entry.msg, entry.outage_s])).toEqual([
      ["database unreachable", undefined],
      ["database reachable again", 5],
    ]);
  });

  it("is not where a failure of our own goes: that is logged every time, as an error with its source", () => {
    const { observability, logs } = observed();
    const report = backgroundFailure(observability, "webhook delivery");
    report(new TypeError("x is not a function"));
    report(new TypeError("x is not a function"));
    expect(observability.outage.down).toBe(false);
    expect(logs.take()).toMatchObject([
      {
        level: "error",
        msg: "webhook delivery failed",
        source: "webhook delivery",
        error: { type: "TypeError", message: "x is not a function" },
      },
      { level: "error", msg: "webhook delivery failed" },
    ]);
  });
});
