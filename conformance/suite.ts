/** Runs scenarios, error-code coverage and properties against one target. */
import type { Contract } from "./contract.ts";
import { documentedErrors, unreachedErrors } from "./coverage.ts";
import { type PropertyOptions, type PropertyResult, runProperties } from "./properties.ts";
import { type Scenario, type ScenarioResult, runScenario } from "./scenario.ts";
import { SCENARIOS } from "./scenarios/index.ts";
import type { Target } from "./target.ts";

export interface CoverageResult {
  outcome: "pass" | "fail" | "skip";
  documented: number;
  missing: string[];
  reason?: string;
}

export interface SuiteRun {
  target: Target;
  results: ScenarioResult[];
  coverage: CoverageResult;
  properties: PropertyResult[];
}

export interface SuiteOptions {
  scenarios?: readonly Scenario[];
  /** null: no property run. Properties need a target that keeps state. */
  properties?: PropertyOptions | null;
  onScenario?(result: ScenarioResult): void;
  onProperty?(result: PropertyResult): void;
}

/**
 * Coverage is a verdict only when every scenario ran on a target that can reach every code: the
 * mock (by asking for examples) or a target with state, operator API and faults.
 */
function coverage(target: Target, contract: Contract, results: ScenarioResult[], complete: boolean): CoverageResult {
  const documented = documentedErrors(contract).length;
  const missing = unreachedErrors(
    contract,
    results.flatMap((result) => result.exchanges),
  );
  const reachable =
    target.kind === "mock" ||
    (["state", "operator", "faults"] as const).every((capability) => target.capabilities.has(capability));
  if (!complete) return { outcome: "skip", documented, missing, reason: "only some scenarios ran" };
  if (!reachable)
    return {
      outcome: "skip",
      documented,
      missing,
      reason: "this target cannot reach every code (needs operator API and faults)",
    };
  return { outcome: missing.length === 0 ? "pass" : "fail", documented, missing };
}

export async function runSuite(
  target: Target,
  contract: Contract,
  { scenarios = SCENARIOS, properties = null, onScenario, onProperty }: SuiteOptions = {},
): Promise<SuiteRun> {
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    const result = await runScenario(scenario, target, contract);
    results.push(result);
    onScenario?.(result);
  }
  const propertyResults =
    properties && target.capabilities.has("state")
      ? await runPropertiesOrFail(target, contract, properties, onProperty)
      : [];
  return {
    target,
    results,
    coverage: coverage(target, contract, results, scenarios === SCENARIOS),
    properties: propertyResults,
  };
}

/** A set-up that fails (the target cannot even start streams) is a failed property run, not a crash. */
async function runPropertiesOrFail(
  target: Target,
  contract: Contract,
  options: PropertyOptions,
  onProperty?: (result: PropertyResult) => void,
): Promise<PropertyResult[]> {
  try {
    return await runProperties(target, contract, options, onProperty);
  } catch (error) {
    return [
      { operationId: "(set-up)", kind: "valid", runs: 0, ms: 0, outcome: "fail", failure: (error as Error).message },
    ];
  }
}

export function suiteFailed(run: SuiteRun): boolean {
  return (
    run.results.some((result) => result.outcome === "fail") ||
    run.coverage.outcome === "fail" ||
    run.properties.some((result) => result.outcome === "fail")
  );
}
