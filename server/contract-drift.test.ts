// Compile-time agreement with the contract (error codes, plans, domain reasons) is checked by
// contract-drift.test-d.ts; these are the values the domain copies from it.
import { describe, expect, it } from "vitest";
import { loadContract } from "../contract/contract.ts";
import { periodStart, type Period } from "./domain/analytics.ts";
import { generateApiKey, parseApiKey } from "./domain/keys.ts";
import { MAX_DURATION_MINUTES } from "./domain/lifecycle.ts";

/**
 * The domain rules are plain synchronous functions, so the few contract values they use are
 * constants there rather than read from the loaded contract; these checks fail when the contract
 * and those constants part.
 */
describe("the domain's copies of contract values match the contract", async () => {
  const { limits } = await loadContract();

  it("a stream without a duration ends after the contract's longest duration", () => {
    expect(MAX_DURATION_MINUTES).toBe(limits.durationMinutes.max);
  });

  it("keys are made and recognised in the contract's key pattern", () => {
    for (const mode of ["live", "test"] as const) expect(generateApiKey(mode)).toMatch(limits.apiKeyPattern);
    for (const key of [
      `svc_live_${"a".repeat(32)}`,
      `svc_test_${"Z9".repeat(16)}`,
      `svc_prod_${"a".repeat(32)}`,
      `svc_test_${"a".repeat(31)}`,
      `svc_test_${"a".repeat(31)}-`,
    ]) {
      expect(parseApiKey(key) !== null, key).toBe(limits.apiKeyPattern.test(key));
    }
  });

  it("every period the contract offers has a length", () => {
    const now = new Date("2026-11-20T12:00:00.000Z");
    for (const period of limits.periods.values)
      expect(periodStart(period as Period, now).getTime()).toBeLessThan(now.getTime());
  });
});
