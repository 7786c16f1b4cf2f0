import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, DatabaseError, type Queryable } from "../store/database.ts";
import { freshDatabase, startTestServer, streamBody, type TestServer } from "../testing/harness.ts";

/** A database whose statements matching `failing` fail, as a driver failure does; null: none fail. */
function failingOn(db: Database) {
  const state: { failing: RegExp | null } = { failing: null };
  const guard = <T>(sql: string, run: () => Promise<T>) => (state.failing?.test(sql) ? Promise.reject(new DatabaseError("injected failure")) : run());
  const wrap = (queryable: Queryable): Queryable => ({ query: (sql, params) => guard(sql, () => queryable.query(sql, params)) });
  const wrapped: Database = { engine: db.engine, ...wrap(db), transaction: (work) => db.transaction((tx) => work(wrap(tx))), exec: (sql) => db.exec(sql), close: () => db.close() };
  return { db: wrapped, state };
}

let server: TestServer;
let faults: { failing: RegExp | null };
let drop: () => Promise<void>;
const logged: unknown[][] = [];

beforeAll(async () => {
  const fresh = await freshDatabase("pglite");
  drop = fresh.drop;
  const failing = failingOn(fresh.db);
  faults = failing.state;
  server = await startTestServer({ database: failing.db, log: (...args) => logged.push(args) });
});
afterAll(async () => {
  await server.close();
  await drop();
});

describe("a failing key look-up", () => {
  it("is 404 not_found on GET and DELETE /streams/{id}, which the spec says never answer 500, and 500 db_error where documented", async () => {
    const { key } = await server.tenant();
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    expect(created.status).toBe(201);
    const path = `/api/v1/streams/${created.body.stream_id}`;

    faults.failing = /\bapi_keys\b/;
    try {
      for (const method of ["GET", "DELETE"]) {
        // DELETE also says the stream may still be live; GET only that the lookup failed.
        const answer = await server.call(method, path, { key });
        expect(answer.status, method).toBe(404);
        expect(answer.body.error.code).toBe("not_found");
        expect(answer.body.error.message).toMatch(/^A server-side failure stopped this/);
      }
      const list = await server.call("GET", "/api/v1/streams", { key });
      expect([list.status, list.body.error.code]).toEqual([500, "db_error"]);
    } finally {
      faults.failing = null;
    }
    // Each failure was logged for the operators, the 404s too.
    expect(logged.splice(0).filter(([where]) => String(where).includes("/streams")).length).toBe(3);
    // Nothing was changed: the stream is still live and can be ended now.
    expect((await server.call("DELETE", path, { key })).status).toBe(200);
  });

  it("is logged, and DELETE says the stream may still be live, when the stream itself cannot be read", async () => {
    const { key } = await server.tenant();
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const path = `/api/v1/streams/${created.body.stream_id}`;

    faults.failing = /\bstreams\b/;
    try {
      const read = await server.call("GET", path, { key });
      expect([read.status, read.body.error.code]).toEqual([404, "not_found"]);
      const end = await server.call("DELETE", path, { key });
      expect([end.status, end.body.error.code]).toEqual([404, "not_found"]);
      expect(end.body.error.message).toMatch(/the stream may still be live/);
    } finally {
      faults.failing = null;
    }
    expect(logged.splice(0).map(([where]) => where)).toEqual([`[GET ${path}]`, `[DELETE ${path}]`]);
    expect((await server.call("GET", path, { key })).body.status).toBe("live");
  });
});
