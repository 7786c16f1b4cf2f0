/** Plain-text tables for the terminal and CI logs. */
import type { ParityDifference } from "./parity.ts";
import type { PropertyResult } from "./properties.ts";
import type { SuiteRun } from "./suite.ts";

const MARK = { pass: "pass", fail: "FAIL", skip: "skip" } as const;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      `  ${row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ")}`.trimEnd(),
    )
    .join("\n");
}

/** One row per scenario, one result column per target. */
export function scenarioTable(runs: SuiteRun[]): string {
  const header = ["scenario", "tag", ...runs.map((run) => run.target.name)];
  const rows = runs[0]!.results.map((result, i) => [
    result.name,
    result.tag,
    ...runs.map((run) => {
      const own = run.results[i]!;
      return own.outcome === "skip"
        ? `skip: ${own.details[0]}`
        : `${MARK[own.outcome]} (${own.exchanges.length} req, ${own.ms} ms)`;
    }),
  ]);
  const coverage = [
    "every documented error code reached",
    "coverage",
    ...runs.map(
      (run) =>
        `${MARK[run.coverage.outcome]} (${run.coverage.documented - run.coverage.missing.length}/${run.coverage.documented})`,
    ),
  ];
  return table([header, ...rows, coverage]);
}

export function propertyTable(results: PropertyResult[], seed: number): string {
  if (results.length === 0) return "";
  const rows = results.map((result) => [
    result.operationId,
    result.kind,
    `${result.runs} cases`,
    `${result.ms} ms`,
    MARK[result.outcome],
  ]);
  return `Properties (seed ${seed}; replay with CONFORMANCE_SEED=${seed}):\n${table([["operation", "input", "cases", "time", "result"], ...rows])}`;
}

/** What failed and why, and why things were skipped. */
export function failureReport(runs: SuiteRun[]): string {
  const lines: string[] = [];
  for (const run of runs) {
    for (const result of run.results.filter((candidate) => candidate.outcome === "fail")) {
      lines.push(
        `FAIL [${run.target.name}] ${result.name}`,
        ...result.details.slice(0, 12).map((detail) => `    ${detail}`),
      );
      if (result.details.length > 12) lines.push(`    … and ${result.details.length - 12} more`);
    }
    if (run.coverage.outcome === "fail")
      lines.push(
        `FAIL [${run.target.name}] documented errors never reached:`,
        ...run.coverage.missing.map((missing) => `    ${missing}`),
      );
    for (const result of run.properties.filter((candidate) => candidate.outcome === "fail")) {
      lines.push(`FAIL [${run.target.name}] property ${result.operationId} (${result.kind} input): ${result.failure}`);
    }
  }
  return lines.join("\n");
}

/** Skipped scenarios say why in the table; a skipped coverage verdict says it here. */
export function skipReport(runs: SuiteRun[]): string {
  return runs
    .filter((run) => run.coverage.outcome === "skip")
    .map((run) => `skip [${run.target.name}] coverage: ${run.coverage.reason}`)
    .join("\n");
}

export function parityReport(differences: ParityDifference[], compared: number): string {
  const head = `Parity report: ${compared} requests sent to both, ${differences.length} answered differently (status or shape).`;
  if (differences.length === 0) return head;
  const rows = differences.map((difference) => [
    difference.source === "probe" ? "probe" : "scenario",
    difference.request,
    `mock: ${difference.mock}`,
    `server: ${difference.server}`,
  ]);
  return `${head}\n${rows.map((row) => `  ${row[1]}  [${row[0]}]\n      ${row[2]}\n      ${row[3]}`).join("\n")}`;
}
