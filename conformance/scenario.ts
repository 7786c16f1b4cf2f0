/**
 * A scenario is one rule of the spec, checked through HTTP. `contract` scenarios check only what
 * any implementation of openapi.yaml must answer (statuses, shapes, error envelopes, security) and
 * run on the mock too; `behaviour` scenarios need a target that keeps state.
 */
import { bases, type Exchange, type Request, createSender, describeExchange } from "./client.ts";
import type { Contract } from "./contract.ts";
import type { Capability, Target, TargetKind } from "./target.ts";
import { type BrandSettings, type Tenant, createTenant, operatorClient } from "./tenants.ts";

export type Tag = "contract" | "behaviour";

export interface Scenario {
  name: string;
  tag: Tag;
  /** Capabilities beyond `state` (implied by `behaviour`). */
  needs?: Capability[];
  /** Target kinds it is meant for, when not all. */
  only?: TargetKind[];
  run(ctx: ScenarioContext): Promise<void>;
}

/** A request to the public API; `key` defaults to the target's all-scopes test key. */
export type Call = Omit<Request, "method" | "path" | "internal">;

export interface ScenarioContext {
  target: Target;
  contract: Contract;
  /** The target's all-scopes test key. */
  key: string;
  call(method: string, path: string, options?: Call): Promise<Exchange>;
  /** A new brand provisioned through the operator API (targets with `operator`). */
  tenant(settings?: BrandSettings): Promise<Tenant>;
  /** The id of a listed creator, read from GET /creators once. */
  creatorId(): Promise<string>;
}

export interface ScenarioResult {
  name: string;
  tag: Tag;
  outcome: "pass" | "fail" | "skip";
  /** Why it failed (assertion, contract violations) or was skipped. */
  details: string[];
  exchanges: Exchange[];
  ms: number;
}

const SCENARIO_TIMEOUT_MS = 60_000;

/** Why `scenario` cannot run on `target`, or null when it can. */
export function skipReason(scenario: Scenario, target: Pick<Target, "kind" | "capabilities">): string | null {
  if (scenario.only && !scenario.only.includes(target.kind)) return `${scenario.only.join(", ")} only`;
  const needs: Capability[] = [
    ...(scenario.tag === "behaviour" ? (["state"] as const) : []),
    ...(scenario.needs ?? []),
  ];
  const missing = needs.filter((need) => !target.capabilities.has(need));
  return missing.length > 0 ? `needs ${missing.join(", ")}` : null;
}

export async function runScenario(scenario: Scenario, target: Target, contract: Contract): Promise<ScenarioResult> {
  const exchanges: Exchange[] = [];
  const started = Date.now();
  const skip = skipReason(scenario, target);
  if (skip) return { name: scenario.name, tag: scenario.tag, outcome: "skip", details: [skip], exchanges, ms: 0 };

  const targetBases = bases(target);
  const send = createSender(contract, targetBases, (exchange) => exchanges.push(exchange));
  let creator: Promise<string> | undefined;
  const key = target.scenarioKey?.() ?? target.key;
  const ctx: ScenarioContext = {
    target,
    contract,
    key,
    call: (method, path, options = {}) => send({ key, ...options, method, path }),
    tenant: (settings) => createTenant(operatorClient(send, targetBases), settings),
    creatorId() {
      creator ??= send({ method: "GET", path: "/creators" }).then((answer) => {
        const id = answer.body?.creators?.[0]?.id;
        if (typeof id !== "string") throw new Error(`GET /creators listed no creator (${answer.status})`);
        return id;
      });
      return creator;
    },
  };

  const details: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      scenario.run(ctx),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`did not finish within ${SCENARIO_TIMEOUT_MS} ms`)),
          SCENARIO_TIMEOUT_MS,
        );
      }),
    ]);
  } catch (error) {
    details.push((error as Error).message);
  } finally {
    clearTimeout(timer);
  }
  for (const exchange of exchanges) {
    for (const violation of exchange.violations) details.push(`${describeExchange(exchange)}: ${violation}`);
  }
  return {
    name: scenario.name,
    tag: scenario.tag,
    outcome: details.length > 0 ? "fail" : "pass",
    details,
    exchanges,
    ms: Date.now() - started,
  };
}
