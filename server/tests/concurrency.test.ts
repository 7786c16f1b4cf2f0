import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../store/database.ts";
import {
  availableEngines,
  freshDatabase,
  manualClock,
  postgresSkipReason,
  startTestServer,
  streamBody,
} from "../../testkit/harness.ts";

const skipped = postgresSkipReason();

describe.each(availableEngines())("concurrency limit on %s", (engine) => {
  it("10 parallel POST /streams with one brand give exactly 3 × 201 and 7 × 429 concurrency_limit", async () => {
    const server = await startTestServer({ engine });
    try {
      const { key } = await server.tenant();
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => server.call("POST", "/api/v1/streams", { key, body: streamBody() })),
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([201, 201, 201, 429, 429, 429, 429, 429, 429, 429]);
      expect(
        responses
          .filter((response) => response.status === 429)
          .every((response) => response.body.error.code === "concurrency_limit"),
      ).toBe(true);
      expect((await server.call("GET", "/api/v1/streams?status=live", { key })).body.total).toBe(3);
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(skipped !== null)("concurrency limit across server processes sharing PostgreSQL", () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it("holds when two app instances with their own connection pools take the same brand's starts", async () => {
    // A second server on its own pool against the same database, as a second process would be.
    const fresh = await freshDatabase("postgres");
    closers.push(() => fresh.drop());
    const secondDb = await openDatabase(fresh.url);
    closers.push(() => secondDb.close());
    const clock = manualClock();
    const servers = [
      await startTestServer({ database: fresh.db, clock }),
      await startTestServer({ database: secondDb, clock }),
    ];
    closers.push(() => Promise.all(servers.map((server) => server.close())));
    const bases = servers.map((server) => server.baseUrl);

    const brandId = (await servers[0]!.brand()).id;
    const { key } = await servers[0]!.key(brandId, { scopes: ["streams:write", "streams:read"] });

    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fetch(`${bases[i % 2]}/api/v1/streams`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(streamBody()),
        }).then((response) => response.status),
      ),
    );
    expect(responses.sort()).toEqual([201, 201, 201, 429, 429, 429, 429, 429, 429, 429]);
  });
});
