/** The database's errors, and how a driver's failure becomes one; shared by both engines. */

/** Raised for any failure of the database itself; the HTTP layer answers 500 db_error. */
export class DatabaseError extends Error {
  override name = "DatabaseError";
  override readonly cause?: unknown;
  constructor(message: string, cause?: unknown) {
    super(message);
    this.cause = cause;
  }
}

/**
 * The embedded database's directory cannot be used: `problem` says why, naming no setting;
 * `holdsDatabase` tells a database that cannot be opened from a directory that is no place for one.
 */
export class DataDirError extends Error {
  override name = "DataDirError";
  readonly dir: string;
  readonly problem: string;
  readonly holdsDatabase: boolean;
  override readonly cause?: unknown;
  constructor(dir: string, problem: string, holdsDatabase: boolean, cause?: unknown) {
    super(`${dir} ${problem}`);
    this.dir = dir;
    this.problem = problem;
    this.holdsDatabase = holdsDatabase;
    this.cause = cause;
  }
}

/** Driver failures become DatabaseError; errors thrown by our own code inside a transaction keep their type. */
export async function driver<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new DatabaseError(errorMessage(error), error);
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
