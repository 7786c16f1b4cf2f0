import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObservability } from "../observability/observability.ts";
import { failingDatabase } from "../../testkit/failing-database.ts";
import { freshDatabase, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";
import { capturedLogs } from "../../testkit/log-capture.ts";

let server: TestServer;
let failOn: (statements: RegExp | null) => void;
let drop: () => Promise<void>;
const logs = capturedLogs();
/** The server errors logged since the last call: `METHOD operation`. */
const serverErrors = () =>
  logs
    .take()
    .filter((entry) => entry.msg === "server error")
    .map((entry) => `${entry.method} ${entry.operation}`);

beforeAll(async () => {
  const fresh = await freshDatabase("pglite");
  drop = fresh.drop;
  const failing = failingDatabase(fresh.db);
  failOn = failing.failOn;
  server = await startTestServer({ database: failing.db, observability: createObservability({ logger: logs.logger }) });
});
afterAll(async () => {
  await server.close();
  await drop();
});

describe("a failing database on GET and DELETE /streams/{id}", () => {
  it("GET is 404 not_found when the key look-up fails (the spec says it never answers 500); DELETE, a write, is 500 db_error", async () => {
    const { brandId, key: creating } = await server.tenant();
    const created = await server.call("POST", "/api/v1/streams", { key: creating, body: streamBody() });
    expect(created.status).toBe(201);
    const path = `/api/v1/streams/${created.body.stream_id}`;
    // A key not used yet: the embedded database remembers a key once it has been looked up.
    const { key } = await server.key(brandId);

    failOn(/\bapi_keys\b/);
    try {
      const read = await server.call("GET", path, { key });
      expect([read.status, read.body.error.code]).toEqual([404, "not_found"]);
      expect(read.body.error.message).toMatch(/^A server-side failure stopped this lookup/);
      // A 404 would say the stream is not live; the end's outcome is open, which only 500 says.
      const end = await server.call("DELETE", path, { key });
      expect([end.status, end.body.error.code]).toEqual([500, "db_error"]);
      const list = await server.call("GET", "/api/v1/streams", { key });
      expect([list.status, list.body.error.code]).toEqual([500, "db_error"]);
    } finally {
      failOn(null);
    }
    // Each failure was logged for the operators, the 404s too.
    expect(serverErrors()).toEqual(["GET getStream", "DELETE endStream", "GET listStreams"]);
    // Nothing was changed: the stream is still live and can be ended now.
    expect((await server.call("DELETE", path, { key })).status).toBe(200);
  });

  it("is logged, and DELETE is 500 db_error, when the stream itself cannot be read", async () => {
    const { key } = await server.tenant();
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const path = `/api/v1/streams/${created.body.stream_id}`;

    failOn(/\bstreams\b/);
    try {
      const read = await server.call("GET", path, { key });
      expect([read.status, read.body.error.code]).toEqual([404, "not_found"]);
      const end = await server.call("DELETE", path, { key });
      expect([end.status, end.body.error.code]).toEqual([500, "db_error"]);
    } finally {
      failOn(null);
    }
    expect(serverErrors()).toEqual(["GET getStream", "DELETE endStream"]);
    expect((await server.call("GET", path, { key })).body.status).toBe("live");
  });
});
