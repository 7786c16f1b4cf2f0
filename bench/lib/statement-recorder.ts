import { randomUUID } from "node:crypto";
import type { Database, Queryable } from "../../server/store/database.ts";

/** One statement as the server ran it (with the ids its answer named), or a transaction of several. */
export interface Statement {
  sql: string;
  params: unknown[];
  answered: string[];
}
export type Step = Statement | { transaction: Statement[] };

/** What a recording holds: its steps and when it was made, which its timestamps are relative to. */
export interface Recording {
  steps: Step[];
  recordedAt: number;
}

/** Runs a statement and records it in `into` (when recording), with the ids of its answer. */
async function recordedQuery<Row>(
  into: Statement[] | undefined,
  sql: string,
  params: unknown[],
  run: () => Promise<Row[]>,
): Promise<Row[]> {
  const statement: Statement = { sql, params: structuredClone(params), answered: [] };
  into?.push(statement);
  const rows = await run();
  statement.answered = JSON.stringify(rows).match(ID) ?? [];
  return rows;
}

/**
 * A Database that records every statement run through it, transactions kept together, between
 * start() and stop(). Everything else is the wrapped database's.
 */
export function recordingDatabase(db: Database): Database & { start(): void; stop(): Recording } {
  let steps: Step[] | undefined;
  let recordedAt = 0;
  const recorded = (into: () => Statement[] | undefined, target: Queryable): Queryable => ({
    query: (sql, params = [], ...rest) => recordedQuery(into(), sql, params, () => target.query(sql, params, ...rest)),
  });
  return {
    engine: db.engine,
    ...(db.probe ? { probe: db.probe } : {}),
    ...(db.maintain ? { maintain: () => db.maintain!() } : {}),
    query: (sql, params = [], ...rest) =>
      recordedQuery(steps as Statement[] | undefined, sql, params, () => db.query(sql, params, ...rest)),
    transaction: (work) =>
      db.transaction((tx) => {
        const statements: Statement[] = [];
        if (steps) steps.push({ transaction: statements });
        return work(recorded(() => (steps ? statements : undefined), tx));
      }),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    poolStats: () => db.poolStats(),
    start: () => {
      steps = [];
      recordedAt = Date.now();
    },
    stop: () => {
      const done = steps ?? [];
      steps = undefined;
      return { steps: done.filter((step) => !("transaction" in step) || step.transaction.length > 0), recordedAt };
    },
  };
}

/** The server's generated ids: UUIDs (streams, brands, keys) and prefixed hex ids (`evt_…` events). */
const ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[a-z]+_[0-9a-f]{32}\b/gi;

function statements(steps: Step[]): Statement[] {
  return steps.flatMap((step) => ("transaction" in step ? step.transaction : [step]));
}

/**
 * The ids a recording made: those first seen as parameters of an INSERT, named by no earlier
 * statement or answer. A replay gives each of them a fresh value every time, so the rows it
 * inserts do not collide; every other id (the brand, the key, the stored streams) stays as recorded.
 */
export function createdIds(steps: Step[]): string[] {
  const seen = new Set<string>();
  const created = new Set<string>();
  for (const { sql, params, answered } of statements(steps)) {
    const inserts = /^\s*(WITH\b[\s\S]*\bINSERT|INSERT)\b/i.test(sql);
    for (const id of JSON.stringify(params).match(ID) ?? []) {
      if (!seen.has(id) && inserts) created.add(id);
      seen.add(id);
    }
    for (const id of answered) seen.add(id);
  }
  return [...created];
}

/** The server's timestamps, as parameters and inside JSON payloads. */
const TIMESTAMP = /\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\b/g;

const MINUTE_MS = 60_000;

/**
 * A recorded time moved by `shiftMs`. One on a whole minute (the rate limiter's window) stays on
 * one, so replays count in one window as the server's requests do, rather than opening a new one.
 */
function shifted(time: number, shiftMs: number): number {
  const moved = time + shiftMs;
  return time % MINUTE_MS === 0 ? moved - (moved % MINUTE_MS) : moved;
}

/**
 * The recorded parameters with fresh ids and every timestamp moved forward by `shiftMs` (the time
 * since the recording). Timestamps kept as recorded would make each replayed stream older than the
 * ones made since, and the list's positions would be renumbered on every insert, which the server
 * never does.
 */
function substitute(value: unknown, fresh: Map<string, string>, shiftMs: number): unknown {
  if (typeof value === "string") {
    return value
      .replace(ID, (id) => fresh.get(id) ?? id)
      .replace(TIMESTAMP, (time) => new Date(shifted(Date.parse(time), shiftMs)).toISOString());
  }
  if (value instanceof Date) return new Date(shifted(value.getTime(), shiftMs));
  if (Array.isArray(value)) return value.map((item) => substitute(item, fresh, shiftMs));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, fresh, shiftMs)]));
}

/** A new id in the same format as `id`. */
function freshId(id: string): string {
  const prefix = /^([a-z]+_)[0-9a-f]{32}$/i.exec(id)?.[1];
  return prefix ? `${prefix}${randomUUID().replaceAll("-", "")}` : randomUUID();
}

/** Whether recorded parameters hold a time, remembered per statement: the loop replays them often. */
const timesIn = new WeakMap<unknown[], boolean>();
function timed(params: unknown[]): boolean {
  let found = timesIn.get(params);
  if (found === undefined) {
    found = params.some((value) => value instanceof Date) || new RegExp(TIMESTAMP.source).test(JSON.stringify(params));
    timesIn.set(params, found);
  }
  return found;
}

/**
 * Runs the recorded statements once more, in order, with fresh values for the ids it creates and
 * its timestamps moved to now.
 */
export async function replay(db: Database, { steps, recordedAt }: Recording, created: string[]): Promise<void> {
  const fresh = new Map(created.map((id) => [id, freshId(id)]));
  const shiftMs = Date.now() - recordedAt;
  const params = (recorded: unknown[]) =>
    fresh.size === 0 && !timed(recorded) ? recorded : (substitute(recorded, fresh, shiftMs) as unknown[]);
  for (const step of steps) {
    if ("transaction" in step) {
      await db.transaction(async (tx) => {
        for (const statement of step.transaction) await tx.query(statement.sql, params(statement.params));
      });
    } else {
      await db.query(step.sql, params(step.params));
    }
  }
}
