import type { Queryable } from "../../store/database.ts";
import { deleteEndedRows, ENDING_TABLES } from "../../store/ended-records.ts";

/**
 * How long a session, invitation or password-reset link is kept once it ended: a day, so that a
 * process whose clock runs behind never loses a row it still takes for live.
 */
const KEPT_AFTER_END_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes the sessions, invitations and reset links that ended over a day ago (the lifecycle
 * sweeper runs it through accountRetention). Nothing reads them again: every look-up asks for a
 * live one, and an ended one answers as one never made. Without it a member signing in daily, or
 * an owner inviting and revoking in a loop, would leave a row each for good.
 */
async function forgetEndedAccountRecords(db: Queryable, now: Date): Promise<number> {
  const before = new Date(now.getTime() - KEPT_AFTER_END_MS);
  let forgotten = 0;
  for (const table of ENDING_TABLES) forgotten += await deleteEndedRows(db, table, before);
  return forgotten;
}

/** How often one process looks for ended records: they need deleting a day late, not at once. */
const LOOK_EVERY_MS = 10 * 60_000;

/**
 * forgetEndedAccountRecords for the lifecycle sweeper, which runs every second: it looks at most
 * once every 10 minutes, so a lock on these tables holds a pass up once in that time, not each.
 */
export function accountRetention(): (db: Queryable, now: Date) => Promise<number> {
  let nextLookAt = Number.NEGATIVE_INFINITY;
  return async (db, now) => {
    if (now.getTime() < nextLookAt) return 0;
    nextLookAt = now.getTime() + LOOK_EVERY_MS;
    return forgetEndedAccountRecords(db, now);
  };
}
