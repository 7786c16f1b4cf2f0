/**
 * The contract scenarios against the Prism mock, and the parity report between the mock and the
 * server: contract scenarios must agree on both; probes show where the mock departs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract } from "./contract.ts";
import { unreachedErrors } from "./coverage.ts";
import { parityDifferences, parityPairs, runProbes } from "./parity.ts";
import { type ScenarioResult, runScenario } from "./scenario.ts";
import { SCENARIOS } from "./scenarios/index.ts";
import { startMockTarget, startServerTarget, type Target } from "./target.ts";

const contract = loadContract();
const contractScenarios = SCENARIOS.filter((scenario) => scenario.tag === "contract");
let mock: Target;
let server: Target;
const onMock: ScenarioResult[] = [];

beforeAll(async () => {
  [mock, server] = await Promise.all([startMockTarget(), startServerTarget(contract)]);
});
afterAll(() => Promise.all([mock?.stop(), server?.stop()]));

describe("contract scenarios against the Prism mock", () => {
  for (const scenario of contractScenarios) {
    it(scenario.name, async () => {
      const result = await runScenario(scenario, mock, contract);
      onMock.push(result);
      expect(result.details).toEqual([]);
      expect(result.outcome).toBe("pass");
    });
  }

  it("skips behaviour scenarios on the mock, which keeps no state", async () => {
    const behaviour = SCENARIOS.find((scenario) => scenario.tag === "behaviour")!;
    expect((await runScenario(behaviour, mock, contract)).outcome).toBe("skip");
  });

  it("reached every documented error code on the mock, by asking for its example", () => {
    expect(unreachedErrors(contract, onMock.flatMap((result) => result.exchanges))).toEqual([]);
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
    // Known departures of a stateless mock that validates on its own terms.
    expect(differences).toContainEqual(expect.objectContaining({ request: "GET /streams?limit=abc", server: "200 {limit,offset,streams,total}" }));
    expect(differences.find((difference) => difference.request === "GET /streams?limit=abc")?.mock).toMatch(/^422 .*status 422 is not documented/);
    expect(differences).toContainEqual(expect.objectContaining({ request: "GET /streams/not-a-uuid", server: "404 error not_found" }));
  });
});
