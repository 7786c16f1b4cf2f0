import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { loadContract } from "../../contract/contract.ts";
import { createApp } from "../app.ts";
import { silentLogger } from "../observability/logger.ts";
import { createObservability } from "../observability/observability.ts";
import { openDatabase } from "../store/database.ts";
import { createBrand, createKey } from "../services/operator.ts";
import { availableEngines, CONFIG, freshDatabase, manualClock, postgresSkipReason, startTestServer, streamBody } from "../testing/harness.ts";

const skipped = postgresSkipReason();
if (skipped) console.log(skipped);

describe.each(availableEngines())("concurrency limit on %s", (engine) => {
  it("10 parallel POST /streams with one brand give exactly 3 × 201 and 7 × 429 concurrency_limit", async () => {
    const server = await startTestServer({ engine });
    try {
      const { key } = await server.tenant();
      const responses = await Promise.all(Array.from({ length: 10 }, () => server.call("POST", "/api/v1/streams", { key, body: streamBody() })));
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([201, 201, 201, 429, 429, 429, 429, 429, 429, 429]);
      expect(responses.filter((response) => response.status === 429).every((response) => response.body.error.code === "concurrency_limit")).toBe(true);
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
    // A second app on its own pool against the same database, as a second process would be.
    const fresh = await freshDatabase("postgres");
    closers.push(() => fresh.drop());
    const secondDb = await openDatabase(fresh.url);
    closers.push(() => secondDb.close());
    const clock = manualClock();
    const contract = await loadContract();
    const apps = [fresh.db, secondDb].map((db) => createApp({ db, contract, config: CONFIG, clock, observability: createObservability({ logger: silentLogger() }) }));
    const servers = await Promise.all(apps.map((app) => new Promise<Server>((resolve) => {
      const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
    })));
    closers.push(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))));
    const bases = servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`);

    const brand = await fresh.db.transaction((tx) => createBrand(tx, { name: "Shared", vertical: "live-commerce", plan: "growth" }, clock()));
    const { key } = await createKey(fresh.db, { brand_id: brand.id, name: "k", environment: "test", scopes: ["streams:write", "streams:read"] }, clock());

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
