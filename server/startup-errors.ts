import { ContractBuildError } from "../contract/built.ts";
import { ConfigError, type Config } from "./config.ts";
import { DataDirLockedError } from "./store/data-dir-lock.ts";
import { DatabaseError, DataDirError } from "./store/database.ts";
import { SchemaTooNewError } from "./store/migrate.ts";

type Settings = Pick<Config, "port" | "host" | "databaseUrl" | "dataDir">;

interface Failure {
  code?: string;
  errno?: number;
  syscall?: string;
  message?: string;
  errors?: Failure[];
}

/** The URL as it may be printed: no password. */
export function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable URL)";
  }
}

/** The driver's own error behind a DatabaseError; an AggregateError (several addresses) gives its code. */
function rootCause(error: unknown): Failure {
  let cause = (error instanceof DatabaseError ? error.cause : error) as Failure | undefined;
  if (cause && !cause.code && cause.errors?.length) cause = { ...cause.errors[0], code: cause.errors[0]!.code };
  return cause ?? {};
}

function postgresProblem(url: URL, cause: Failure, message: string): string {
  const at = `${url.hostname}:${url.port || 5432}`;
  const database = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || "postgres";
  switch (cause.code) {
    case "ECONNREFUSED":
      return `connection refused at ${at}: no PostgreSQL listens there. Fix: start PostgreSQL, or correct the host and port in DATABASE_URL.`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the host "${url.hostname}" cannot be resolved. Fix: correct the host in DATABASE_URL.`;
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${at} cannot be reached (${cause.code}). Fix: check the host, the port and the network (firewall) between this machine and PostgreSQL.`;
    case "28P01":
    case "28000":
      return `${message}. Fix: correct the user name or password in DATABASE_URL (or the server's pg_hba.conf).`;
    case "3D000":
      return `database "${database}" does not exist. Fix: create it (createdb -h ${url.hostname} -U ${decodeURIComponent(url.username) || "postgres"} ${database}), or name an existing database in DATABASE_URL.`;
    case "42501":
      return `${message}: the user may not create the server's tables. Fix: grant it CREATE on the database (or connect as its owner).`;
    default:
      return `${message}. Fix: check that PostgreSQL runs and that DATABASE_URL names its host, port, user, password and database.`;
  }
}

/** Which setting names the database: DATABASE_URL, or DATA_DIR for the embedded one. */
function databaseSetting(settings: Settings): string {
  if (settings.databaseUrl?.startsWith("postgres")) return `DATABASE_URL ${maskedUrl(settings.databaseUrl)}`;
  return settings.databaseUrl === "memory:" ? "DATABASE_URL memory:" : `DATA_DIR ${settings.dataDir}`;
}

/**
 * One line an operator can act on: the setting or path, the cause, the fix. The stack is for
 * LOG_LEVEL=debug (serve.ts prints it there); this line never needs it.
 */
export function describeStartupError(error: unknown, settings: Settings | undefined): string {
  return explain(error, settings).replace(/\s+/g, " ");
}

function explain(error: unknown, settings: Settings | undefined): string {
  if (error instanceof ConfigError) return `Configuration error: ${error.message}`;
  if (error instanceof ContractBuildError) return error.message;
  if (error instanceof DataDirLockedError) {
    const { pid, host, started_at } = error.holder;
    if (error.legacy) {
      return `DATA_DIR ${error.dir} is locked by process ${pid} on ${host} (started ${started_at}), with the lock file of release 1.1.0 or older. Fix: stop that process; if it is gone already, delete ${error.dir}/server.lock and start again.`;
    }
    return `DATA_DIR ${error.dir} is in use by process ${pid} on ${host} (started ${started_at}): the embedded database allows one server process. Fix: stop that process, or set DATA_DIR to another directory, or use PostgreSQL (DATABASE_URL) for several processes. A lock left by a killed process is taken over once untouched for 10 s.`;
  }
  if (error instanceof DataDirError) {
    const fix = error.holdsDatabase
      ? "restore the directory from a backup, or set DATA_DIR to a new directory (a fresh database is created there)"
      : "set DATA_DIR to a new or empty directory this user can write";
    return `DATA_DIR ${error.message}. Fix: ${fix}.`;
  }
  if (!settings) return `Could not start: ${error instanceof Error ? error.message : String(error)}`;
  if (error instanceof SchemaTooNewError) {
    return `${databaseSetting(settings)}: ${error.message}. Fix: run that newer version, or restore a backup taken before the upgrade.`;
  }
  const cause = rootCause(error);
  if (cause.syscall === "listen" && cause.code === "EADDRNOTAVAIL" && settings.host !== undefined) {
    return `HOST ${settings.host}: no network interface of this machine has this address. Fix: set HOST to one of this machine's addresses (127.0.0.1 for this machine only), or leave it unset for every interface.`;
  }
  if (cause.syscall === "listen") {
    const why =
      cause.code === "EADDRINUSE"
        ? "the port is in use by another process"
        : cause.code === "EACCES"
          ? "this user may not listen on it"
          : (cause.message ?? String(cause.code));
    return `PORT ${settings.port}: ${why}. Fix: stop the other process, or set PORT to a free port (PORT=0 picks one).`;
  }
  if (error instanceof DatabaseError && settings.databaseUrl?.startsWith("postgres")) {
    return `DATABASE_URL ${maskedUrl(settings.databaseUrl)}: ${postgresProblem(new URL(settings.databaseUrl), cause, error.message || String(cause.code))}`;
  }
  if (error instanceof DatabaseError) return `${databaseSetting(settings)}: ${error.message}.`;
  return `Could not start: ${error instanceof Error ? error.message : String(error)}`;
}
