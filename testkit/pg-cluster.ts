import { execFile, execFileSync } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

/** Where Debian's packages put each PostgreSQL version's programs. */
const DEBIAN_POSTGRESQL = "/usr/lib/postgresql";
/** The unprivileged account the server runs as when the test runs as root (PostgreSQL refuses root). */
const SERVER_ACCOUNT = "postgres";

/** The newest installed PostgreSQL's bin directory, or null. */
export function postgresBinaries(): string | null {
  if (!existsSync(DEBIAN_POSTGRESQL)) return null;
  const versions = readdirSync(DEBIAN_POSTGRESQL)
    .filter((version) => existsSync(join(DEBIAN_POSTGRESQL, version, "bin", "pg_ctl")))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest === undefined ? null : join(DEBIAN_POSTGRESQL, newest, "bin");
}

/** Why a cluster of the test's own cannot be made here, or null. */
export function clusterSkipReason(): string | null {
  if (!postgresBinaries())
    return `no PostgreSQL programs under ${DEBIAN_POSTGRESQL}/<version>/bin (Debian's postgresql package)`;
  if (isRoot() && !accountExists(SERVER_ACCOUNT))
    return `running as root and there is no "${SERVER_ACCOUNT}" account to run PostgreSQL as`;
  return null;
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function accountExists(name: string): boolean {
  try {
    execFileSync("id", ["-u", name], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** A port no one listens on right now (the kernel's choice). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface PgCluster {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> (trust authentication, loopback only). */
  url(database?: string): string;
  createDatabase(name: string): Promise<void>;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`: sessions are terminated, open transactions rolled back, then a checkpoint. */
  stop(): Promise<void>;
  /** `pg_ctl restart -m fast`. */
  restart(): Promise<void>;
  /** pg_terminate_backend of every backend connected to `database`, from an admin connection; returns how many. */
  terminateAll(database: string): Promise<number>;
  /** The server's log so far. */
  log(): string;
  /** Stops the server at once and deletes its directory. */
  cleanup(): Promise<void>;
}

/**
 * A throwaway PostgreSQL cluster of the test's own, with Debian's programs (initdb, pg_ctl), in a
 * temporary directory, on a free loopback port: the test may restart it or terminate its
 * backends without touching the shared server. Run as `postgres` when the test runs as root.
 */
export async function createCluster({ bin = postgresBinaries() } = {}): Promise<PgCluster> {
  if (!bin) throw new Error(clusterSkipReason() ?? "no PostgreSQL programs");
  const dir = mkdtempSync(join(tmpdir(), "lsh-pg-"));
  if (isRoot()) {
    const { uid, gid } = accountIds(SERVER_ACCOUNT);
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  const logFile = join(dir, "server.log");
  /** `name args`, as the server's account when the test runs as root. */
  const commandLine = (name: string, args: string[]): [string, string[]] =>
    isRoot() ? ["runuser", ["-u", SERVER_ACCOUNT, "--", join(bin, name), ...args]] : [join(bin, name), args];
  const program = async (name: string, args: string[]) => {
    try {
      return await run(...commandLine(name, args), { timeout: 60_000 });
    } catch (error) {
      const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
      throw new Error(
        `${name} ${args.join(" ")} failed: ${(error as Error).message}\n${stdout}${stderr}\n${readLog(logFile)}`,
      );
    }
  };
  const port = await freePort();

  await program("initdb", [
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    "postgres",
    "-E",
    "UTF8",
    "--no-sync",
    "--no-instructions",
  ]);
  // Settings a restart keeps; fsync off because nothing here outlives the test (a clean stop still
  // writes everything, so what was acknowledged survives a restart).
  const settings = {
    port: String(port),
    listen_addresses: "'127.0.0.1'",
    unix_socket_directories: `'${dir}'`,
    fsync: "off",
    full_page_writes: "off",
    shared_buffers: "'32MB'",
    max_connections: "100",
  };
  appendFileSync(
    join(data, "postgresql.conf"),
    Object.entries(settings)
      .map(([name, value]) => `${name} = ${value}\n`)
      .join(""),
  );

  const pgCtl = (args: string[]) => program("pg_ctl", ["-D", data, "-l", logFile, "-w", "-t", "60", ...args]);
  const url = (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url() });
    // An admin connection cut by a restart must not throw out of the test.
    client.on("error", () => undefined);
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  // If the test process dies without cleanup, the server must not outlive it.
  const stopAtExit = () => {
    try {
      execFileSync(...commandLine("pg_ctl", ["-D", data, "stop", "-m", "immediate"]), { stdio: "ignore" });
    } catch {
      // Already stopped.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", stopAtExit);

  await pgCtl(["start"]);
  return {
    port,
    url,
    createDatabase: (name) =>
      admin(async (client) => void (await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`))),
    start: async () => void (await pgCtl(["start"])),
    stop: async () => void (await pgCtl(["stop", "-m", "fast"])),
    restart: async () => void (await pgCtl(["restart", "-m", "fast"])),
    terminateAll: (database) =>
      admin(async (client) => {
        const { rows } = await client.query<{ terminated: boolean }>(
          "SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
          [database],
        );
        return rows.filter((row) => row.terminated).length;
      }),
    log: () => readLog(logFile),
    async cleanup() {
      process.off("exit", stopAtExit);
      await program("pg_ctl", ["-D", data, "-w", "-t", "60", "stop", "-m", "immediate"]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accountIds(name: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync("id", [flag, name], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

/** The last lines of the server's log, for failure messages. */
function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-40).join("\n");
  } catch {
    return "";
  }
}
