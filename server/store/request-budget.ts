/**
 * A request's database time: one statement time-out plus the grace (PostgresSettings) in all,
 * whatever it spends it on: waits for a connection, statements, a transaction run again. When it
 * is spent a statement fails at once rather than start, and a statement running is given up at
 * the moment it runs out, so no answer waits on the database for two time-outs in a row. Time the
 * request spends computing (a password hash) is its own. Carried with the request's async context
 * (AsyncLocalStorage); work outside a request (the background jobs) has no budget, nor has work
 * that outlives its request's answer.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface DatabaseBudget {
  leftMs: number;
  /** False once the request was answered: what it left running is background work from then on. */
  open(): boolean;
}

const budgets = new AsyncLocalStorage<DatabaseBudget | undefined>();

/** Runs `work` charging its database waits to `budget`. */
export function withDatabaseBudget<T>(budget: DatabaseBudget, work: () => T): T {
  return budgets.run(budget, work);
}

/** Runs `work` with no budget: a response that stays open (an event stream) polls for long. */
export function withoutDatabaseBudget<T>(work: () => T): T {
  return budgets.run(undefined, work);
}

/** Milliseconds of database time the current request has left; Infinity outside a request. */
export function databaseTimeLeft(): number {
  const budget = budgets.getStore();
  return budget?.open() ? budget.leftMs : Number.POSITIVE_INFINITY;
}

/** Runs `wait` (a wait on the database), charging its duration to the current request's budget. */
export async function chargedToRequest<T>(wait: () => Promise<T>): Promise<T> {
  const budget = budgets.getStore();
  const started = Date.now();
  try {
    return await wait();
  } finally {
    if (budget) budget.leftMs -= Date.now() - started;
  }
}
