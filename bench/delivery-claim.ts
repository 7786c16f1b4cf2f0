/**
 * How long the webhook worker's claim takes while one receiver is down with a backlog of 100,000
 * due deliveries (at its per-webhook cap) and others have work: it should not grow with the
 * backlog. Runs on PGlite, and on PostgreSQL too when TEST_DATABASE_URL is set.
 *
 *   npx tsx bench/delivery-claim.ts
 *   TEST_DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npx tsx bench/delivery-claim.ts
 */
import { claimDueDeliveries } from "../server/store/delivery-queue.ts";
import { availableEngines, freshDatabase, startTestServer, streamBody } from "../testkit/harness.ts";

const BACKLOG = 100_000;
const CLAIMS = 50;

async function measure(engine: "pglite" | "postgres"): Promise<void> {
  const { db, drop } = await freshDatabase(engine);
  const server = await startTestServer({ database: db, config: { webhookAllowHosts: ["localhost"] } });
  try {
    const { key } = await server.tenant();
    for (const path of ["/down", "/a", "/b"]) {
      await server.call("POST", "/api/v1/webhooks", {
        key,
        body: { url: `https://localhost${path}`, events: ["stream.started"] },
      });
    }
    await server.call("POST", "/api/v1/streams", { key, body: streamBody() });
    const [down] = await db.query<{ id: string }>("SELECT id FROM webhooks WHERE url LIKE '%/down'");
    const [event] = await db.query<{ id: string; brand_id: string }>("SELECT id, brand_id FROM webhook_events LIMIT 1");
    await db.query(
      `INSERT INTO webhook_events (id, brand_id, mode, type, stream_id, payload, created_at)
       SELECT 'evt_backlog_' || g, brand_id, mode, type, stream_id, payload, created_at
       FROM webhook_events, generate_series(1, ${BACKLOG}) g WHERE id = $1`,
      [event!.id],
    );
    await db.query(
      `INSERT INTO webhook_deliveries (id, event_id, webhook_id, brand_id, status, next_attempt_at, created_at)
       SELECT gen_random_uuid(), 'evt_backlog_' || g, $1, $2, 'pending', $3::timestamptz - interval '1 hour', $3
       FROM generate_series(1, ${BACKLOG}) g`,
      [down!.id, event!.brand_id, server.clock()],
    );
    await db.query("ANALYZE webhook_deliveries");

    const now = server.clock();
    const lease = new Date(now.getTime() + 60_000);
    const times: number[] = [];
    let claimed = 0;
    for (let i = 0; i < CLAIMS; i += 1) {
      const started = performance.now();
      // The receiver that is down already has its 5 attempts in flight.
      const got = await db.transaction((tx) =>
        claimDueDeliveries(tx, now, lease, { limit: 20, perWebhook: 5, inFlight: new Map([[down!.id, 5]]) }),
      );
      times.push(performance.now() - started);
      claimed += got.claimed.length;
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
    console.log(
      `${engine.padEnd(8)} ${CLAIMS} claims beside a backlog of ${BACKLOG.toLocaleString("en")}: p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms; claimed ${claimed} (the other receivers' 2)`,
    );
  } finally {
    await server.close();
    await drop();
  }
}

for (const engine of availableEngines()) await measure(engine);
