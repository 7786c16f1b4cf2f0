/**
 * The suite is itself tested: a server broken on purpose (createApp's `faults`, applied after
 * the server's own response validation) must make scenarios, properties and the CLI fail, and
 * the checker must flag each kind of contract break.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSuiteContract, responseViolations } from "./contract.ts";
import { unreachedErrors } from "./coverage.ts";
import { propertySession } from "./properties.ts";
import { runScenario } from "./scenario.ts";
import { SCENARIOS } from "./scenarios/index.ts";
import { startServerTarget, type Target } from "./target.ts";

const contract = await loadSuiteContract();
const scenario = (name: string) => SCENARIOS.find((candidate) => candidate.name.startsWith(name))!;

describe("the response checker", () => {
  const listStreams = contract.operation("listStreams");
  const json = (body: unknown, status = 200, headers: Record<string, string> = {}) => ({
    status,
    headers: new Headers({
      "content-type": "application/json; charset=utf-8",
      "request-id": "req_0123456789abcdef",
      ...headers,
    }),
    text: JSON.stringify(body),
  });
  const page = { streams: [], total: 0, limit: 20, offset: 0 };

  it("accepts a conformant answer", () => {
    expect(responseViolations(listStreams, json(page))).toEqual([]);
  });

  it("flags an undocumented status, an undocumented field, a wrong type, a missing field and a wrong media type", () => {
    expect(responseViolations(listStreams, json(page, 203))).toEqual([
      expect.stringContaining("status 203 is not documented for listStreams"),
    ]);
    expect(responseViolations(listStreams, json({ ...page, extra: 1 }))).toEqual([
      expect.stringContaining("must NOT have additional properties (extra)"),
    ]);
    expect(responseViolations(listStreams, json({ ...page, limit: "20" }))).toEqual([
      expect.stringContaining("/limit must be integer"),
    ]);
    expect(responseViolations(listStreams, json({ streams: [] }))).toEqual([
      expect.stringContaining("must have required property"),
    ]);
    expect(responseViolations(listStreams, json(page, 200, { "content-type": "text/html" }))).toEqual([
      expect.stringContaining('content type "text/html"'),
    ]);
  });

  it("flags an error code the response does not document, and a required header that is absent", () => {
    expect(responseViolations(listStreams, json({ error: { code: "invalid_fields", message: "x" } }, 401))).toEqual([
      expect.stringContaining("/error/code"),
    ]);
    expect(responseViolations(contract.operation("listCreators"), json({ creators: [] }))).toEqual([
      "required header cache-control is absent",
    ]);
    const withoutRequestId = { ...json(page), headers: new Headers({ "content-type": "application/json" }) };
    expect(responseViolations(listStreams, withoutRequestId)).toEqual(["required header request-id is absent"]);
    expect(responseViolations(listStreams, json(page, 200, { "request-id": "has space" }))).toEqual([
      expect.stringMatching(/^header request-id: .*must match pattern/),
    ]);
  });

  it("counts a documented error as reached only when its answer conforms", () => {
    const answer = {
      operationId: "endStream",
      status: 404,
      body: { error: { code: "not_found" } },
      violations: [],
    } as never;
    expect(unreachedErrors(contract, [answer])).not.toContain("endStream 404 not_found");
    expect(unreachedErrors(contract, [{ ...(answer as object), violations: ["x"] } as never])).toContain(
      "endStream 404 not_found",
    );
  });
});

describe("a server that adds an undocumented field", () => {
  let broken: Target;
  beforeAll(async () => {
    broken = await startServerTarget(contract, { faults: { extraResponseField: true } });
  });
  afterAll(() => broken?.stop());

  it("fails contract and behaviour scenarios, naming the field", async () => {
    for (const name of ["discovery", "DELETE /webhooks of an unknown id", "ending a live stream"]) {
      const result = await runScenario(scenario(name), broken, contract);
      expect(result.outcome).toBe("fail");
      expect(result.details.join("\n")).toContain("must NOT have additional properties (fault_injected)");
    }
  });

  it("fails the properties, with the seed to replay them", async () => {
    const session = await propertySession(broken, contract);
    const [result] = await session.run(contract.operation("getDiscovery"), { runs: 5, seed: 4242 });
    expect(result).toMatchObject({ outcome: "fail" });
    expect(result!.failure).toMatch(/^seed 4242, path/);
  });
});

describe("a server that answers an undocumented status", () => {
  let broken: Target;
  beforeAll(async () => {
    broken = await startServerTarget(contract, { faults: { undocumentedStatus: true } });
  });
  afterAll(() => broken?.stop());

  it("fails, naming the status and the operation", async () => {
    const result = await runScenario(scenario("creators are sorted"), broken, contract);
    expect(result.outcome).toBe("fail");
    expect(result.details.join("\n")).toContain("status 203 is not documented for listCreators");
  });

  it("blames the broken 2xx answers only, not the conformant 401s around them", async () => {
    const result = await runScenario(scenario("401 bodies are byte-identical"), broken, contract);
    expect(result.details).toEqual([
      "GET /creators → 203: status 203 is not documented for listCreators (documented: 200, 500)",
    ]);
  });
});
