/**
 * Property-based negative testing of every public operation, driven by the schemas in
 * openapi.yaml. Invalid input (bodies, query strings, path values, keys) must get a documented
 * 4xx with the error envelope; valid input a 2xx or a documented business error. Never a 500,
 * never a hang, never an answer the contract does not document. The cases are in
 * property-cases.ts; this file runs them.
 */
import fc from "fast-check";
import { integerSetting } from "../server/config.ts";
import { SchemaArbitraries } from "./arbitraries.ts";
import { bases, createSender, describeExchange, type Exchange, type Send } from "./client.ts";
import type { Contract, Operation } from "./contract.ts";
import { type Case, PROPERTY_CASES, type World } from "./property-cases.ts";
import type { Target } from "./target.ts";
import { createTenant, operatorClient } from "./tenants.ts";

export interface PropertyResult {
  operationId: string;
  kind: "invalid" | "valid";
  runs: number;
  ms: number;
  outcome: "pass" | "fail";
  failure?: string;
}

export interface PropertyOptions {
  /** Cases per property: each operation gets `runs` valid and (where it has any) `runs` invalid ones. */
  runs: number;
  seed: number;
}

/**
 * CONFORMANCE_RUNS (default 200) and CONFORMANCE_SEED (default: a fresh seed, which the caller
 * prints so that a failure can be replayed).
 */
export function propertyOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): PropertyOptions {
  return {
    runs: integerSetting(env, "CONFORMANCE_RUNS", 200, { min: 1 }),
    seed: integerSetting(env, "CONFORMANCE_SEED", Date.now() % 2 ** 31),
  };
}

/** What every answer must satisfy whatever the input: conformant, no 5xx. */
function problemsWith(exchange: Exchange, testCase: Case): string[] {
  const verdict = testCase.judge(exchange);
  return [
    ...exchange.violations,
    ...(exchange.status >= 500 ? [`a ${exchange.status} to client input`] : []),
    ...(verdict ? [verdict] : []),
  ];
}

/** What the cases draw on, on a stateful target: `key`'s brand gets streams of its own. */
export async function prepareWorld(contract: Contract, send: Send, key: string): Promise<World> {
  const creators = await send({ method: "GET", path: "/creators" });
  const creatorIds: string[] = creators.body.creators.map((creator: { id: string }) => creator.id);
  const streamIds: string[] = [];
  let serverTime: Date | undefined;
  for (let i = 0; i < 5; i++) {
    const created = await send({
      method: "POST",
      path: "/streams",
      key,
      body: { creator_id: creatorIds[0], product_name: "Property base", platform: "youtube" },
    });
    if (created.status < 200 || created.status >= 300 || typeof created.body?.stream_id !== "string")
      throw new Error(`setting up the property world: ${describeExchange(created)} ${created.text}`);
    streamIds.push(created.body.stream_id);
    serverTime ??= new Date(created.body.created_at);
  }
  const canonical401 = (await send({ method: "GET", path: "/streams" })).text;
  return {
    contract,
    arbitraries: new SchemaArbitraries(contract),
    key,
    creatorIds,
    streamIds,
    serverTime: serverTime ?? new Date(),
    canonical401,
  };
}

export interface PropertySession {
  /** Runs the invalid-input and valid-input properties of one operation. */
  run(op: Operation, options: PropertyOptions): Promise<PropertyResult[]>;
}

/** Sets up what the properties need on a stateful target: a roomy brand's key, creators, streams. */
export async function propertySession(target: Target, contract: Contract): Promise<PropertySession> {
  const send = createSender(contract, bases(target));
  const key = target.capabilities.has("operator")
    ? (await (await createTenant(operatorClient(send, bases(target)))).key()).key
    : target.key;
  const world = await prepareWorld(contract, send, key);
  return {
    async run(op, { runs, seed }) {
      const define = PROPERTY_CASES[op.operationId];
      if (!define) throw new Error(`conformance/property-cases.ts has no cases for ${op.operationId}; add them`);
      const cases = define(op, world);
      const results: PropertyResult[] = [];
      for (const [kind, arbitrary] of [
        ["invalid", cases.invalid],
        ["valid", cases.valid],
      ] as const) {
        if (!arbitrary) continue;
        const started = Date.now();
        const property = fc.asyncProperty(arbitrary, async (testCase) => {
          const exchange = await send(testCase.request);
          const problems = problemsWith(exchange, testCase);
          if (problems.length > 0)
            throw new Error(
              `${testCase.label}\n  ${describeExchange(exchange)} ${exchange.text.slice(0, 200)}\n  ${problems.join("\n  ")}`,
            );
        });
        const details = await fc.check(property, { numRuns: runs, seed });
        const result: PropertyResult = {
          operationId: op.operationId,
          kind,
          runs: details.numRuns,
          ms: Date.now() - started,
          outcome: details.failed ? "fail" : "pass",
        };
        if (details.failed) {
          const reason =
            details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
          result.failure = `seed ${details.seed}, path "${details.counterexamplePath}", after ${details.numShrinks} shrinks:\n  ${reason}`;
        }
        results.push(result);
      }
      return results;
    },
  };
}

/**
 * Runs the properties of every public operation against a stateful target. Each property is
 * seeded with `seed`; a failure names the seed and fast-check's path, to replay it with
 * CONFORMANCE_SEED.
 */
export async function runProperties(
  target: Target,
  contract: Contract,
  options: PropertyOptions,
  onResult: (result: PropertyResult) => void = () => undefined,
): Promise<PropertyResult[]> {
  const session = await propertySession(target, contract);
  const results: PropertyResult[] = [];
  for (const op of contract.publicOperations) {
    for (const result of await session.run(op, options)) {
      results.push(result);
      onResult(result);
    }
  }
  return results;
}
