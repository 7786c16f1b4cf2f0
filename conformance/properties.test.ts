/**
 * Property-based negative testing against the real server: for every public operation, at
 * least 200 invalid and 200 valid generated requests (CONFORMANCE_RUNS for more), seeded; the seed
 * is printed so a failure replays with CONFORMANCE_SEED=<seed>.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSuiteContract } from "./contract.ts";
import { propertyOptionsFromEnv, propertySession, type PropertySession } from "./properties.ts";
import { startServerTarget, type Target } from "./target.ts";

const contract = await loadSuiteContract();
const options = propertyOptionsFromEnv();
let server: Target;
let session: PropertySession;

beforeAll(async () => {
  console.log(
    `conformance properties: seed ${options.seed}, ${options.runs} cases per operation and input kind (replay: CONFORMANCE_SEED=${options.seed})`,
  );
  server = await startServerTarget(contract);
  session = await propertySession(server, contract);
});
afterAll(() => server?.stop());

describe(`properties of every public operation (seed ${options.seed})`, () => {
  it("runs at least 200 cases per operation", () => {
    expect(options.runs).toBeGreaterThanOrEqual(200);
  });

  for (const op of contract.publicOperations) {
    it(`${op.operationId}: invalid input gets a documented 4xx with the envelope, valid input a 2xx or a business error`, async () => {
      const results = await session.run(op, options);
      expect(results.map((result) => result.failure ?? "pass")).toEqual(results.map(() => "pass"));
      for (const result of results) expect(result.runs).toBe(options.runs);
    });
  }
});
