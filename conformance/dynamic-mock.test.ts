/**
 * The dynamic mock against the suite (issue 43): every scenario that needs no operator API and no
 * database faults passes on it, each with a key (so a brand) of its own; and the mock's story
 * (mock-story.ts) gives the same statuses, codes, messages and shapes as the server, on each
 * engine the server runs on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { availableEngines, postgresSkipReason } from "../testkit/harness.ts";
import { MOCK_BRAND } from "../mock/keys.ts";
import { bases, createSender } from "./client.ts";
import { loadSuiteContract } from "./contract.ts";
import { runStory, storyDifferences, type StoryRun } from "./mock-story.ts";
import { runScenario, skipReason } from "./scenario.ts";
import { SCENARIOS } from "./scenarios/index.ts";
import { newMockKey, startMockTarget, startServerTarget, type Target } from "./target.ts";
import { createTenant, operatorClient } from "./tenants.ts";

const contract = await loadSuiteContract();
const CREATOR = "avt_Qfmm3FkkaQM0";
let mock: Target;

beforeAll(async () => {
  mock = await startMockTarget({ dynamic: true });
});
afterAll(() => mock?.stop());

describe("scenarios against the dynamic mock", () => {
  const runnable = SCENARIOS.filter(
    (scenario) => !skipReason(scenario, { kind: "mock", capabilities: new Set(["state"]) }),
  );

  it("runs the behaviour scenarios a key can show, not only the contract ones", () => {
    expect(runnable.filter((scenario) => scenario.tag === "behaviour").length).toBeGreaterThan(10);
  });

  for (const scenario of runnable) {
    it(`[${scenario.tag}] ${scenario.name}`, async () => {
      const result = await runScenario(scenario, mock, contract);
      expect(result.details).toEqual([]);
      expect(result.outcome).toBe("pass");
    });
  }
});

describe("the mock's story against the server's test and live modes", () => {
  let onMock: StoryRun;
  beforeAll(async () => {
    const send = createSender(contract, bases(mock));
    onMock = await runStory(send, { test: newMockKey("test"), live: newMockKey("live") }, CREATOR, mock.tick);
  });

  it("holds on the mock: distinct v4 ids, listed, read, ended once, counted, heard; ws_url names the room; messages name the mode", () => {
    expect(onMock.failures).toEqual([]);
    expect(onMock.steps.flatMap(({ exchange }) => exchange.violations)).toEqual([]);
    expect(onMock.steps.length).toBeGreaterThan(35);
  });

  if (postgresSkipReason())
    console.log(`The story against the server on PostgreSQL is skipped: ${postgresSkipReason()}`);
  for (const engine of availableEngines()) {
    describe(`the server on ${engine}`, () => {
      let server: Target;
      let onServer: StoryRun;
      beforeAll(async () => {
        server = await startServerTarget(contract, { engine });
        const send = createSender(contract, bases(server));
        // Brands set as the mock's are (mock/keys.ts), one per key as on the mock.
        const operator = operatorClient(send, bases(server));
        const brand = { ...MOCK_BRAND, vertical: "live-commerce" as const };
        const [test, live] = await Promise.all([createTenant(operator, brand), createTenant(operator, brand)]);
        const keys = { test: (await test.key()).key, live: (await live.key({ environment: "live" })).key };
        onServer = await runStory(send, keys, CREATOR, server.tick);
      });
      afterAll(() => server?.stop());

      it("holds on the server too", () => {
        expect(onServer.failures).toEqual([]);
        expect(onServer.steps.flatMap(({ exchange }) => exchange.violations)).toEqual([]);
      });

      it("answers the same sequence with the same statuses, codes, messages and shapes", () => {
        expect(onServer.steps.map(({ label }) => label)).toEqual(onMock.steps.map(({ label }) => label));
        expect(storyDifferences(onMock, onServer)).toEqual([]);
      });
    });
  }
});
