import { describe, expect, it } from "vitest";
import { assertCanAfford, billedMinutes, projectedCostCents, settle } from "./billing.ts";
import type { ApiError } from "./errors.ts";
import type { Brand } from "./types.ts";

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 20, 12, 0, 0) + seconds * 1000);

const brand = (overrides: Partial<Brand> = {}): Brand => ({
  id: "b",
  name: "B",
  vertical: "live-commerce",
  plan: "growth",
  creditsCents: 1000,
  creditsHeldCents: 0,
  planMinutes: 100,
  minutesUsed: 0,
  rateLimitPerMinute: 100,
  maxActiveStreams: 3,
  createdAt: at(0),
  ...overrides,
});

describe("billing", () => {
  it("bills whole minutes rounded up, dropping partial seconds", () => {
    expect(billedMinutes(at(0), at(0))).toBe(0);
    expect(billedMinutes(at(0), at(1))).toBe(1);
    expect(billedMinutes(at(0), at(60))).toBe(1);
    expect(billedMinutes(at(0), new Date(at(60).getTime() + 999))).toBe(1);
    expect(billedMinutes(at(0), at(61))).toBe(2);
    expect(billedMinutes(at(0), at(30 * 60))).toBe(30);
  });

  it("holds the projected cost of the whole duration", () => {
    expect(projectedCostCents(30, 30)).toBe(900);
  });

  it("reports the plan minutes used up before insufficient credits", () => {
    const error = (() => {
      try {
        assertCanAfford(brand({ minutesUsed: 100, creditsCents: 0 }), 900);
      } catch (caught) {
        return caught as ApiError;
      }
    })();
    expect(error?.code).toBe("no_minutes");
  });

  it("counts held credits as unavailable", () => {
    expect(() => assertCanAfford(brand({ creditsCents: 1000, creditsHeldCents: 200 }), 900)).toThrow(
      expect.objectContaining({ code: "insufficient_credits" }),
    );
    expect(() => assertCanAfford(brand({ creditsCents: 1000, creditsHeldCents: 100 }), 900)).not.toThrow();
  });

  it("settles a stream that never went live with nothing charged and the hold released", () => {
    expect(settle({ startedAt: null, endedAt: at(400), holdCents: 900, pricePerMinuteCents: 30 })).toEqual({
      billedMinutes: 0,
      chargedCents: 0,
      releasedHoldCents: 900,
    });
  });

  it("charges billed minutes at the stream's price and releases the whole hold", () => {
    expect(settle({ startedAt: at(10), endedAt: at(10 + 125), holdCents: 900, pricePerMinuteCents: 30 })).toEqual({
      billedMinutes: 3,
      chargedCents: 90,
      releasedHoldCents: 900,
    });
  });
});
