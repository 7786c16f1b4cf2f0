import { cpus, release, totalmem } from "node:os";
import type { Measurement } from "./load.ts";
import type { OperationId } from "./operations.ts";
import type { TargetKind } from "./targets.ts";
import { compositeCeiling, type Floor } from "./floors.ts";

export interface Row extends Measurement {
  operation: OperationId;
  operationLabel: string;
  target: TargetKind;
  targetLabel: string;
  /** Each figure divided by the same figure of the framework ceiling / of Prism on the same operation (null: none measured). */
  vsFramework?: Ratios | null;
  vsPrism?: Ratios | null;
  /** Growth rows (growth.ts): each figure divided by the same server's list of its 20-stream brand. */
  vsSmallBrand?: Ratios;
  /** Fan-out rows (fan-out.ts): the 50-webhook brand's figures divided by the 1-webhook brand's on the same server. */
  vsOneWebhook?: Ratios;
  /** The target process's CPU (user + system) per request, µs; for PostgreSQL rows also its server processes'. */
  cpuPerRequestUs?: number;
  databaseCpuPerRequestUs?: number;
  /** Real-server rows: the database floor of the operation on the same engine (floors.ts), the composite ceiling, and req/s ÷ that ceiling. */
  floorRps?: number;
  /** How the floor was measured: statements per request, replays at once, replays that failed. */
  floor?: Pick<Floor, "statements" | "concurrency" | "failed">;
  compositeRps?: number;
  vsComposite?: number;
}

export interface Ratios {
  rps: number;
  p50: number;
  p99: number;
}

export interface TargetCheck {
  goal: string;
  row: string;
  value: string;
  met: boolean;
}

export function machine() {
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    os: `${process.platform} ${release()}`,
  };
}

function ratios(row: Measurement, reference: Measurement | undefined): Ratios | undefined {
  if (!reference) return undefined;
  return { rps: row.rps / reference.rps, p50: row.p50 / reference.p50, p99: row.p99 / reference.p99 };
}

export function withRatios(rows: Row[]): Row[] {
  return rows.map((row) => {
    const same = (kind: TargetKind) => rows.find((other) => other.operation === row.operation && other.target === kind);
    return { ...row, vsFramework: ratios(row, same("framework")), vsPrism: ratios(row, same("prism")) };
  });
}

/**
 * Each real-server row beside its composite ceiling: the framework ceiling's req/s on the same
 * operation combined with the database floor of the row's engine (`floors`, keyed by target label).
 */
export function withFloors(rows: Row[], floors: Map<string, Map<OperationId, Floor>>): Row[] {
  return rows.map((row) => {
    const floor = floors.get(row.targetLabel)?.get(row.operation);
    const framework = rows.find((other) => other.operation === row.operation && other.target === "framework");
    if (row.target !== "real" || !floor || !framework) return row;
    const compositeRps = compositeCeiling(framework.rps, floor.rps);
    const { statements, concurrency, failed } = floor;
    return {
      ...row,
      floorRps: floor.rps,
      floor: { statements, concurrency, failed },
      compositeRps,
      vsComposite: row.rps / compositeRps,
    };
  });
}

/**
 * The targets judged from the rows (reported, not asserted by tests). The composite ceiling is a
 * figure of each row, no longer a target: the server's own work is judged by bench/cpu.ts.
 */
export function checkTargets(rows: Row[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const x = (value: number) => `${value.toFixed(2)}×`;
  for (const row of rows.filter((candidate) => candidate.target === "real")) {
    const name = `${row.operationLabel}, ${row.targetLabel}`;
    const floor = row.operation === "list" ? 0.75 : row.operation === "get" ? 0.8 : undefined;
    if (floor !== undefined && row.vsFramework) {
      checks.push({
        goal: `req/s ≥ ${floor} × framework ceiling`,
        row: name,
        value: x(row.vsFramework.rps),
        met: row.vsFramework.rps >= floor,
      });
    }
    if (row.vsPrism)
      checks.push({ goal: "req/s ≥ 2 × Prism", row: name, value: x(row.vsPrism.rps), met: row.vsPrism.rps >= 2 });
  }
  for (const row of rows) {
    checks.push({
      goal: "p99 ≤ 15 ms",
      row: `${row.operationLabel}, ${row.targetLabel}`,
      value: Number.isNaN(row.p99) ? "no answer" : `${row.p99.toFixed(2)} ms`,
      met: row.p99 <= 15,
    });
  }
  return checks;
}

export const fixed = (value: number | undefined, digits: number) =>
  value === undefined || Number.isNaN(value) ? "–" : value.toFixed(digits);

/** A Markdown table, readable in a terminal and pasted as is into the README. */
export function table(rows: Row[]): string {
  const header = [
    "operation",
    "target",
    "req/s",
    "p50 ms",
    "p99 ms",
    "CPU µs/req",
    "db floor req/s",
    "req/s ÷ composite",
    "req/s ÷ fw",
    "p50 ÷ fw",
    "p99 ÷ fw",
    "req/s ÷ Prism",
    "p99 ÷ Prism",
    "non-2xx",
  ];
  const lines = rows.map((row) => [
    row.operationLabel,
    row.targetLabel,
    fixed(row.rps, 0),
    fixed(row.p50, 2),
    fixed(row.p99, 2),
    row.databaseCpuPerRequestUs === undefined
      ? fixed(row.cpuPerRequestUs, 0)
      : `${fixed(row.cpuPerRequestUs, 0)} + ${fixed(row.databaseCpuPerRequestUs, 0)}`,
    fixed(row.floorRps, 0),
    fixed(row.vsComposite, 2),
    fixed(row.vsFramework?.rps, 2),
    fixed(row.vsFramework?.p50, 2),
    fixed(row.vsFramework?.p99, 2),
    fixed(row.vsPrism?.rps, 2),
    fixed(row.vsPrism?.p99, 2),
    String(row.non2xx + row.errors),
  ]);
  return markdownTable(header, lines);
}

/** Columns after the first two are numbers, aligned right. */
export function markdownTable(header: string[], lines: string[][]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...lines.map((line) => line[column]!.length)));
  const format = (cells: string[]) =>
    `| ${cells.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(" | ")} |`;
  const rule = `|${widths.map((width, column) => (column < 2 ? "-".repeat(width + 2) : `${"-".repeat(width + 1)}:`)).join("|")}|`;
  return [format(header), rule, ...lines.map(format)].join("\n");
}

export function targetLines(checks: TargetCheck[]): string {
  return checks
    .map(
      (check) =>
        `${check.met ? "met    " : "MISSED "} ${check.goal.padEnd(32)} ${check.value.padStart(9)}  ${check.row}`,
    )
    .join("\n");
}
