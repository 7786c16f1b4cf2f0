// A transaction's outcome on PostgreSQL when its connection is cut at the worst moments, through a
// proxy that cuts it exactly there: before a statement reaches the server (nothing committed: the
// transaction runs again), and right after COMMIT reached it (committed, but the answer is lost:
// the outcome is read back). Either way the caller learns what happened, once.
import { connect, createServer, type Server, type Socket } from "node:net";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, postgresSkipReason } from "../../testkit/harness.ts";
import { type Database, openDatabase } from "./database.ts";

const skipped = postgresSkipReason();
if (skipped) console.log(skipped);

/**
 * A proxy to PostgreSQL that, once armed with a statement text, cuts the connection that sends it:
 * `before` the server gets it, or `after` (the server gets it, its answer never comes back).
 */
async function cuttingProxy(target: URL) {
  let armed: { text: string; when: "before" | "after"; cut(): void } | null = null;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let replies = true;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (chunk: Buffer) => {
      const trap = armed;
      if (trap && chunk.includes(Buffer.from(`${trap.text}\0`))) {
        armed = null;
        trap.cut();
        if (trap.when === "before") return cut();
        replies = false;
        upstream.write(chunk);
        // Long enough for the server to act on it; its answer is dropped meanwhile.
        setTimeout(cut, 300);
        return;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (replies) client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on("error", () => undefined);
      socket.on("close", cut);
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    /** Resolves once the cut was made. */
    arm(text: string, when: "before" | "after"): Promise<void> {
      return new Promise((resolve) => {
        armed = { text, when, cut: resolve };
      });
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.skipIf(skipped !== null)("a transaction whose connection is cut (PostgreSQL)", () => {
  let drop: () => Promise<void>;
  let direct: Database;
  let db: Database;
  let proxy: Awaited<ReturnType<typeof cuttingProxy>>;

  beforeAll(async () => {
    const fresh = await freshDatabase("postgres");
    ({ drop } = fresh);
    direct = fresh.db;
    await direct.exec("CREATE TABLE outcome_probe (id text PRIMARY KEY, runs int NOT NULL DEFAULT 1)");
    proxy = await cuttingProxy(new URL(fresh.url));
    db = await openDatabase(proxy.url);
  });
  afterAll(async () => {
    await db?.close();
    await proxy?.close();
    await drop?.();
  });

  const rows = async (id: string) =>
    direct.query<{ runs: number }>("SELECT runs FROM outcome_probe WHERE id = $1", [id]);

  it("lost before COMMIT was sent: runs again on a fresh connection, and commits once", async () => {
    let runs = 0;
    const cut = proxy.arm("INSERT INTO outcome_probe (id) VALUES ('before')", "before");
    const result = await db.transaction(async (tx) => {
      runs++;
      await tx.query("INSERT INTO outcome_probe (id) VALUES ('before')");
      return "done";
    });
    await cut;
    expect([result, runs]).toEqual(["done", 2]);
    expect(await rows("before")).toEqual([{ runs: 1 }]);
  });

  it("COMMIT reached the server and its answer was lost: read back as committed, not run again", async () => {
    let runs = 0;
    const result = await db.transaction(async (tx) => {
      runs++;
      await tx.query("INSERT INTO outcome_probe (id) VALUES ('after')");
      // Armed only now: the next COMMIT on the wire is this transaction's.
      void proxy.arm("COMMIT", "after");
      return "done";
    });
    expect([result, runs]).toEqual(["done", 1]);
    expect(await rows("after")).toEqual([{ runs: 1 }]);
  });

  it("a refusal is still a refusal: a failed statement is not run again", async () => {
    let runs = 0;
    await expect(
      db.transaction(async (tx) => {
        runs++;
        await tx.query("INSERT INTO outcome_probe (id) VALUES (NULL)");
      }),
    ).rejects.toThrow(/null value/);
    expect(runs).toBe(1);
  });
});
