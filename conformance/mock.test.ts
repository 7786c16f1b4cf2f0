/**
 * The contract scenarios against the mock, and the parity report between the mock and the server:
 * contract scenarios (auth, base path, trailing slash, malformed JSON, CORS among them) must
 * answer alike on both, request by request; probes show where a stateless mock must depart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSuiteContract } from "./contract.ts";
import { unreachedErrors } from "./coverage.ts";
import { PROBE_ID, parityDifferences, parityPairs, runProbes } from "./parity.ts";
import { type ScenarioResult, runScenario } from "./scenario.ts";
import { SCENARIOS } from "./scenarios/index.ts";
import { startMockTarget, startServerTarget, type Target } from "./target.ts";

const contract = await loadSuiteContract();
const contractScenarios = SCENARIOS.filter((scenario) => scenario.tag === "contract");
let mock: Target;
let server: Target;
const onMock: ScenarioResult[] = [];

beforeAll(async () => {
  [mock, server] = await Promise.all([startMockTarget(), startServerTarget(contract)]);
});
afterAll(() => Promise.all([mock?.stop(), server?.stop()]));

describe("contract scenarios against the static mock", () => {
  for (const scenario of contractScenarios) {
    it(scenario.name, async () => {
      const result = await runScenario(scenario, mock, contract);
      onMock.push(result);
      expect(result.details).toEqual([]);
      expect(result.outcome).toBe("pass");
    });
  }

  it("skips behaviour scenarios on the static mock, which keeps no state (conformance/dynamic-mock.test.ts runs them on the dynamic mock)", async () => {
    const behaviour = SCENARIOS.find((scenario) => scenario.tag === "behaviour")!;
    expect((await runScenario(behaviour, mock, contract)).outcome).toBe("skip");
  });

  it("reached every documented error code on the mock, by asking for its example", () => {
    expect(
      unreachedErrors(
        contract,
        onMock.flatMap((result) => result.exchanges),
      ),
    ).toEqual([]);
  });
});

describe("parity between the mock and the server", () => {
  it("contract scenarios answer alike on both; probes report where the mock departs", async () => {
    const onServer: ScenarioResult[] = [];
    for (const scenario of contractScenarios) onServer.push(await runScenario(scenario, server, contract));
    const scenarioPairs = parityPairs(onMock, onServer);
    expect(scenarioPairs.length).toBeGreaterThan(30);
    expect(parityDifferences(scenarioPairs)).toEqual([]);

    const probes = { mock: await runProbes(mock, contract), server: await runProbes(server, contract) };
    expect(probes.server.flatMap((exchange) => exchange.violations)).toEqual([]);
    const differences = parityDifferences(parityPairs([], [], probes));
    // The only departures left are those of a mock that keeps no state: it finds any well-formed
    // id and accepts any well-formed key.
    expect(differences.map((difference) => difference.request).sort()).toEqual(
      [
        `DELETE /streams/${PROBE_ID}`,
        `GET /streams (Authorization: Bearer svc_test_Zz9Zz9Zz…)`,
        `GET /streams/${PROBE_ID}`,
      ].sort(),
    );
    expect(differences.every((difference) => difference.server.startsWith("40"))).toBe(true);
  });
});
