/**
 * A statement that cannot change data (ours call no writing functions: the trigger functions of
 * migration 005 run only inside the writes to `streams` that fire them, and a write's tables
 * include those its triggers reach); anything else, a `WITH` included, is a write.
 */
export const READ_ONLY = /^\s*SELECT\b/i;

/** A statement on rows; anything else (CREATE, ALTER, TRUNCATE, a script, …) may change the schema itself. */
export const ROW_STATEMENT = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;
