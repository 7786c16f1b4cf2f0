import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { once } from "node:events";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../config.ts";
import { openDatabase } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { postgresSkipReason, scratchPostgresDatabase, streamBody } from "../../testkit/harness.ts";
import { type RunningProcess, runServer, serverOrigin, stop } from "../../testkit/server-process.ts";

const skipped = postgresSkipReason();
if (skipped) console.log(skipped);

const scratch = mkdtempSync(join(tmpdir(), "lsh-start-"));
const started: RunningProcess[] = [];
const server = (env: Record<string, string | undefined>) => {
  const running = runServer(env);
  started.push(running);
  return running;
};
afterEach(async () => {
  await Promise.all(started.splice(0).map((running) => stop(running, "SIGKILL")));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A start that fails: exit code 1 and exactly one line on stderr. */
async function failedStart(env: Record<string, string | undefined>): Promise<string> {
  const running = server(env);
  const { code } = await running.exited;
  expect(code, running.stdout()).toBe(1);
  const lines = running.stderr().trim().split("\n");
  expect(lines, running.stderr()).toHaveLength(1);
  return lines[0]!;
}

// Each test starts server processes (a few seconds each, more on a loaded machine).
const SLOW = { timeout: 120_000 };

describe("one server process per embedded database", SLOW, () => {
  it("refuses a second process on the same DATA_DIR while the first serves; a lock left by SIGKILL is taken over once stale", async () => {
    const dataDir = join(scratch, "locked");
    const first = server({ DATA_DIR: dataDir });
    const origin = await serverOrigin(first);
    expect(existsSync(join(dataDir, "server.lock"))).toBe(true);

    const line = await failedStart({ DATA_DIR: dataDir });
    expect(line).toMatch(
      new RegExp(
        `^DATA_DIR ${dataDir} is in use by process ${first.child.pid} on \\S+ \\(started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\): .*Fix: stop that process`,
      ),
    );
    expect((await fetch(`${origin}/api/v1/`)).status).toBe(200);

    first.child.kill("SIGKILL");
    await first.exited;
    expect(existsSync(join(dataDir, "server.lock"))).toBe(true);

    const next = server({ DATA_DIR: dataDir });
    const nextOrigin = await serverOrigin(next);
    await next.waitFor(/The demo test key was shown on the first start only/);
    expect((await fetch(`${nextOrigin}/api/v1/`)).status).toBe(200);
    next.child.kill("SIGTERM");
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(next.stdout()).toContain(`database: closed, ${dataDir} unlocked`);
    expect(existsSync(join(dataDir, "server.lock"))).toBe(false);
  });
});

/** This machine's addresses other than the loopback's (link-local ones left out: they need a scope). */
function localAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((one) => one !== undefined && !one.internal && !one.address.startsWith("fe80:"))
    .map((one) => one!.address);
}

/** Whether a TCP connection to `host`:`port` is taken. */
async function reachable(host: string, port: number): Promise<boolean> {
  const socket = connect({ host, port });
  try {
    await once(socket, "connect");
    return true;
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

describe("the address listened on (HOST)", SLOW, () => {
  it("listens on HOST alone; unset, on every interface", async () => {
    const portOf = async (running: RunningProcess) => Number(new URL(await serverOrigin(running)).port);
    const [boundPort, everywherePort] = await Promise.all([
      portOf(server({ DATABASE_URL: "memory:", HOST: "127.0.0.1" })),
      portOf(server({ DATABASE_URL: "memory:" })),
    ]);
    expect((await fetch(`http://127.0.0.1:${boundPort}/api/v1/`)).status).toBe(200);
    // 127.0.0.2 is this machine too (Linux puts all of 127.0.0.0/8 on the loopback), but not
    // the address listened on; nor is any of the machine's other addresses.
    const others = ["127.0.0.2", ...localAddresses()];
    for (const address of others) expect(await reachable(address, boundPort), address).toBe(false);
    for (const address of others) expect(await reachable(address, everywherePort), address).toBe(true);
  });
});

describe("start-up errors an operator can act on: one line naming the setting, the cause and the fix", SLOW, () => {
  it("port in use", async () => {
    const blocker = createServer().listen(0, "0.0.0.0");
    await once(blocker, "listening");
    const port = (blocker.address() as { port: number }).port;
    try {
      expect(await failedStart({ DATABASE_URL: "memory:", PORT: String(port) })).toBe(
        `PORT ${port}: the port is in use by another process. Fix: stop the other process, or set PORT to a free port (PORT=0 picks one).`,
      );
    } finally {
      blocker.close();
    }
  });

  it("HOST that is no address, or no address of this machine; TRUST_PROXY as a hop count", async () => {
    expect(await failedStart({ DATABASE_URL: "memory:", HOST: "localhost" })).toBe(
      'Configuration error: HOST must be an IP address of this machine to listen on (127.0.0.1 or ::1 for this machine only, 0.0.0.0 or :: for every interface), got "localhost"',
    );
    // A documentation address (RFC 5737) that no interface here has.
    const elsewhere = "198.51.100.77";
    expect(localAddresses()).not.toContain(elsewhere);
    expect(await failedStart({ DATABASE_URL: "memory:", HOST: elsewhere })).toBe(
      `HOST ${elsewhere}: no network interface of this machine has this address. Fix: set HOST to one of this machine's addresses (127.0.0.1 for this machine only), or leave it unset for every interface.`,
    );
    expect(await failedStart({ DATABASE_URL: "memory:", TRUST_PROXY: "1" })).toMatch(
      /^Configuration error: TRUST_PROXY=1 counts proxies, .* List the proxies' addresses instead: TRUST_PROXY=loopback for nginx on the same host \(with HOST=127\.0\.0\.1\), or their addresses and subnets, e\.g\. TRUST_PROXY=10\.0\.0\.0\/8$/,
    );
  });

  it("unreachable PostgreSQL, without the password", async () => {
    expect(await failedStart({ DATABASE_URL: "postgres://lsh:s3cret@127.0.0.1:1/lsh" })).toBe(
      "DATABASE_URL postgres://lsh:***@127.0.0.1:1/lsh: connection refused at 127.0.0.1:1: no PostgreSQL listens there. Fix: start PostgreSQL, or correct the host and port in DATABASE_URL.",
    );
  });

  it("a DATA_DIR that is a file, a foreign directory, a corrupt database", async () => {
    const file = join(scratch, "a-file");
    writeFileSync(file, "not a directory");
    expect(await failedStart({ DATA_DIR: file })).toBe(
      `DATA_DIR ${file} is a file, not a directory. Fix: set DATA_DIR to a new or empty directory this user can write.`,
    );

    const foreign = join(scratch, "home");
    mkdirSync(foreign);
    writeFileSync(join(foreign, "notes.txt"), "someone's files");
    expect(await failedStart({ DATA_DIR: foreign })).toMatch(
      new RegExp(
        `^DATA_DIR ${foreign} is not empty and holds no database \\(it has notes.txt\\)\\. Fix: set DATA_DIR to a new`,
      ),
    );

    const corrupt = join(scratch, "corrupt");
    mkdirSync(corrupt);
    writeFileSync(join(corrupt, "PG_VERSION"), "17\n");
    expect(await failedStart({ DATA_DIR: corrupt })).toMatch(
      new RegExp(
        `^DATA_DIR ${corrupt} holds a database that cannot be opened: .+\\. Fix: restore the directory from a backup, or set DATA_DIR to a new directory`,
      ),
    );
    expect(existsSync(join(corrupt, "server.lock"))).toBe(false);
  });

  it("a database a newer version migrated: runs beside expand-only migrations, refuses a contracting one", async () => {
    const dataDir = join(scratch, "newer");
    const db = await openDatabase(undefined, { dataDir });
    await migrate(db);
    // What an expand-only migration of a newer version does: a table, and columns this code does not know.
    await db.query("CREATE TABLE from_the_future (id int)");
    for (const table of ["brands", "api_keys", "streams", "webhooks", "webhook_events", "webhook_deliveries"])
      await db.query(`ALTER TABLE ${table} ADD COLUMN from_the_future text NOT NULL DEFAULT 'later'`);
    await db.query("INSERT INTO schema_migrations (name) VALUES ('998_from_the_future.sql')");
    await db.close();
    const running = server({ DATA_DIR: dataDir, WEBHOOK_ALLOW_HOSTS: "127.0.0.1" });
    const origin = await serverOrigin(running);
    expect((await fetch(`${origin}/readyz`)).status).toBe(200);
    expect(running.stdout()).toContain(
      "The database has migrations of a newer version (998_from_the_future.sql); they only add, so this version runs on it.",
    );
    // It serves on it: the demo key (a first start) starts, lists, reads and ends a stream, registers a webhook.
    const [, key] = running.stdout().match(/\n {2}(svc_test_\w+)\n/)!;
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${origin}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    };
    const made = await call("POST", "/streams", streamBody());
    expect(made.status).toBe(201);
    expect(made.body).not.toHaveProperty("from_the_future");
    expect((await call("GET", "/streams")).status).toBe(200);
    expect((await call("GET", `/streams/${made.body.stream_id}`)).status).toBe(200);
    const hook = await call("POST", "/webhooks", { url: "http://127.0.0.1:9/hook", events: ["stream.ended"] });
    expect(hook.status).toBe(201);
    expect((await call("GET", "/webhooks")).status).toBe(200);
    expect((await call("DELETE", `/streams/${made.body.stream_id}`)).status).toBe(200);
    await stop(running);

    const again = await openDatabase(undefined, { dataDir });
    await again.query("INSERT INTO schema_migrations (name, contracting) VALUES ('999_from_the_future.sql', true)");
    await again.close();
    expect(await failedStart({ DATA_DIR: dataDir })).toBe(
      `DATA_DIR ${dataDir}: the database was migrated by a newer version of this server (contracting migrations this version does not have: 999_from_the_future.sql). Fix: run that newer version, or restore a backup taken before the upgrade.`,
    );
  });

  it("prints the stack only with LOG_LEVEL=debug", async () => {
    const running = server({ DATABASE_URL: "postgres://lsh:pw@127.0.0.1:1/lsh", LOG_LEVEL: "debug" });
    expect((await running.exited).code).toBe(1);
    const [line, ...stack] = running.stderr().trim().split("\n");
    expect(line).toMatch(/^DATABASE_URL .*connection refused/);
    expect(stack.join("\n")).toMatch(/DatabaseError[\s\S]*\n\s+at /);
  });

  describe.skipIf(!testDatabaseUrl())("on the local PostgreSQL", () => {
    const base = new URL(testDatabaseUrl() ?? "postgres://x");
    const url = (change: (url: URL) => void) => {
      const copy = new URL(base);
      change(copy);
      return copy.toString();
    };

    it("wrong password", async () => {
      const wrong = url((u) => (u.password = "not-the-password"));
      expect(await failedStart({ DATABASE_URL: wrong })).toBe(
        `DATABASE_URL ${url((u) => (u.password = "***"))}: password authentication failed for user "${base.username}". Fix: correct the user name or password in DATABASE_URL (or the server's pg_hba.conf).`,
      );
    });

    it("missing database", async () => {
      const missing = url((u) => (u.pathname = "/lsh_no_such_database"));
      expect(await failedStart({ DATABASE_URL: missing })).toMatch(
        /: database "lsh_no_such_database" does not exist\. Fix: create it \(createdb -h \S+ -U \S+ lsh_no_such_database\), or name an existing database in DATABASE_URL\.$/,
      );
    });

    it("first start on an empty database says how to create a brand and a key", async () => {
      const empty = await scratchPostgresDatabase(testDatabaseUrl()!, "lsh_first");
      try {
        const running = server({ DATABASE_URL: empty.url });
        await serverOrigin(running);
        // The hint's last line (an earlier line may name docs/operators.md too: the TOTP key's warning).
        await running.waitFor(/\(docs\/operators\.md: Operator API and CLI\)/);
        expect(running.stdout()).toMatch(
          /No brands yet[\s\S]*export ADMIN_URL=http:\/\/\S+:\d+\/admin\/v1\n[\s\S]*npm run admin -- brands create[\s\S]*npm run admin -- keys create --brand <brand_id>/,
        );
        await stop(running);
        expect((await running.exited).code).toBe(0);
      } finally {
        await empty.drop();
      }
    });
  });
});
