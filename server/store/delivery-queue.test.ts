// A claim tells how many rows it picked before locking, so a worker that lost some to another
// process's claim (SKIP LOCKED) tries again instead of taking it for "nothing to do".
import { afterEach, describe, expect, it } from "vitest";
import { availableEngines, startTestServer, streamBody, type TestServer } from "../../testkit/harness.ts";
import { claimDueDeliveries } from "./delivery-queue.ts";
import { fanOutEvents } from "./outbox.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Two deliveries due, to two webhooks of one brand; the claim's time and lease. */
async function twoDue(engine: "pglite" | "postgres") {
  server = await startTestServer({ engine, config: { webhookAllowHosts: ["localhost"] } });
  const { key } = await server.tenant();
  for (const path of ["/one", "/two"]) {
    const body = { url: `https://localhost${path}`, events: ["stream.started"] };
    expect((await server.call("POST", "/api/v1/webhooks", { key, body })).status).toBe(201);
  }
  expect((await server.call("POST", "/api/v1/streams", { key, body: streamBody() })).status).toBe(201);
  await fanOutEvents(server.db);
  const now = server.clock();
  return { db: server.db, now, lease: new Date(now.getTime() + 60_000) };
}

describe("claimDueDeliveries", () => {
  it("claims at most `limit` plus `firstPlaces`, the extra ones only first attempts of a brand with nothing in flight", async () => {
    const { db, now, lease } = await twoDue(availableEngines()[0]!);
    // The brand has nothing in flight: one place from the reserve, none from the slots.
    const reserved = await claimDueDeliveries(db, now, lease, { limit: 0, firstPlaces: 5, perBrand: 5 });
    expect(reserved.claimed).toHaveLength(1);
    expect(reserved.picked).toBe(1);
  });

  it.skipIf(!availableEngines().includes("postgres"))(
    "reports rows picked but locked by another claim (PostgreSQL)",
    async () => {
      const { db, now, lease } = await twoDue("postgres");
      await db.transaction(async (tx) => {
        // Another process's claim holds one of the two due rows locked.
        await tx.query(
          "SELECT id FROM webhook_deliveries WHERE status = 'pending' ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE",
        );
        const got = await claimDueDeliveries(db, now, lease, { limit: 10 });
        expect(got.claimed).toHaveLength(1);
        expect(got.picked).toBe(2);
      });
    },
  );
});
