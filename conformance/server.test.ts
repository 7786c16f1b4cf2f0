/**
 * Every scenario against the real server, in-process on an in-memory PGlite, then the verdict on
 * documented-error coverage. A scenario that needs what the server target lacks is skipped.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Exchange } from "./client.ts";
import { loadSuiteContract } from "./contract.ts";
import { documentedErrors, unreachedErrors } from "./coverage.ts";
import { runScenario } from "./scenario.ts";
import { SCENARIOS } from "./scenarios/index.ts";
import { startServerTarget, type Target } from "./target.ts";

const contract = await loadSuiteContract();
let server: Target;
const exchanges: Exchange[] = [];

beforeAll(async () => {
  server = await startServerTarget(contract);
});
afterAll(() => server?.stop());

// Scenarios written for another target only (such as the mock's error-code switch) are not
// server scenarios at all, so they are left out rather than reported as skipped.
const serverScenarios = SCENARIOS.filter((scenario) => !scenario.only || scenario.only.includes("server"));

describe("conformance scenarios against the server", () => {
  for (const scenario of serverScenarios) {
    it(`[${scenario.tag}] ${scenario.name}`, async (ctx) => {
      const result = await runScenario(scenario, server, contract);
      exchanges.push(...result.exchanges);
      if (result.outcome === "skip") return ctx.skip(result.details[0]);
      expect(result.details).toEqual([]);
      expect(result.outcome).toBe("pass");
    });
  }

  it("reached every documented (operation, status, error code)", () => {
    expect(documentedErrors(contract).length).toBeGreaterThan(40);
    expect(unreachedErrors(contract, exchanges)).toEqual([]);
  });
});

describe("conformance scenarios against a server that allow-lists local webhook hosts", () => {
  let local: Target;
  beforeAll(async () => {
    local = await startServerTarget(contract, { webhookAllowHosts: ["localhost", "127.0.0.1"] });
  });
  afterAll(() => local?.stop());

  for (const scenario of serverScenarios.filter((candidate) => candidate.name.includes("webhook"))) {
    it(`[${scenario.tag}] ${scenario.name}`, async () => {
      const result = await runScenario(scenario, local, contract);
      expect(result.details).toEqual([]);
      expect(result.outcome).toBe("pass");
    });
  }

  it("fails the refusal check, naming WEBHOOK_ALLOW_HOSTS, when the suite is not told of the allow-list", async () => {
    const untold = { ...local, webhookAllowHosts: [] };
    const scenario = serverScenarios.find((candidate) =>
      candidate.name.startsWith("webhook registration rejects bad input"),
    )!;
    const result = await runScenario(scenario, untold, contract);
    expect(result.outcome).toBe("fail");
    expect(result.details.join("\n")).toMatch(/localhost.*was accepted: .*WEBHOOK_ALLOW_HOSTS/);
  });
});
