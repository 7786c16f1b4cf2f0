// Fuzzing every operation of openapi.yaml and every endpoint outside it, on each engine, against
// the server in this process and against a server process: malformed, wrong-typed, huge and
// deeply nested bodies, wrong content types, bad and repeated headers, bad path ids and query
// strings, and protocol edges on a raw socket. Every answer: no 5xx, errors in the envelope with a
// code the contract documents for the status, a Request-Id; after each batch the server still
// answers, and the process has not exited. The seed is fixed (FUZZ_SEED to try others, FUZZ_RUNS
// for more cases) and printed with every failure, so that a failure replays.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { endpointCases, operationCases, unknownPathCases } from "../../conformance/fuzz/cases.ts";
import { allEdges } from "../../conformance/fuzz/edges.ts";
import { ENDPOINTS } from "../../conformance/fuzz/endpoints.ts";
import { type FuzzOptions, fuzzOptionsFromEnv, type FuzzSession, fuzzSession } from "../../conformance/fuzz/session.ts";
import { loadSuiteContract } from "../../conformance/contract.ts";
import { inProcessFuzzTarget, processFuzzTarget, type RunningFuzzTarget } from "../../testkit/fuzz-targets.ts";
import { availableEngines, type Engine } from "../../testkit/harness.ts";

const contract = await loadSuiteContract();
const edges = allEdges(contract);

interface Leg {
  kind: string;
  start(engine: Engine): Promise<RunningFuzzTarget>;
  options: FuzzOptions;
}

// In this process the cases are cheap; the server process is there to show that nothing kills it.
const LEGS: Leg[] = [
  { kind: "in this process", start: inProcessFuzzTarget, options: fuzzOptionsFromEnv(40) },
  { kind: "server process", start: processFuzzTarget, options: fuzzOptionsFromEnv(10) },
];

for (const engine of availableEngines()) {
  for (const { kind, start, options } of LEGS) {
    describe(`fuzz: ${engine}, ${kind} (seed ${options.seed}, ${options.runs} cases per property)`, {
      timeout: 120_000,
    }, () => {
      let target: RunningFuzzTarget;
      let session: FuzzSession;

      // A server process starts in seconds, more on a loaded machine.
      beforeAll(async () => {
        target = await start(engine);
        session = await fuzzSession(target, contract, options);
      }, 120_000);
      afterAll(() => target?.stop());
      // After each batch: still serving, and (a server process) still running.
      afterEach(async () => {
        expect(await session.alive()).toEqual([]);
      });

      async function holds(name: string, cases: Parameters<FuzzSession["check"]>[1]) {
        const failure = await session.check(name, cases, options);
        if (failure) expect.fail(`fuzz ${engine}, ${kind}: ${failure}`);
      }

      for (const op of contract.operations) {
        it(`${op.operationId} (${op.method} ${op.servedPath}): every answer documented, in the envelope, never a 5xx`, () =>
          holds(op.operationId, operationCases(op, session.world)));
      }
      for (const endpoint of ENDPOINTS) {
        it(`${endpoint.path} (outside the contract): a documented answer or an error in the envelope`, () =>
          holds(endpoint.path, endpointCases(endpoint, session.world)));
      }
      it("paths no operation or endpoint has: 404 not_found in the envelope", () =>
        holds("unknown paths", unknownPathCases(session.world)));

      it.each(edges.map((edge) => [edge.label, edge] as const))("edge: %s", async (_label, edge) => {
        expect(await session.send(edge.build(session.world, target.port), options)).toEqual([]);
      });
    });
  }
}
