import type { DeliveryStatus } from "../domain/types.ts";
import type { Queryable } from "./database.ts";

export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  brandId: string;
  /** The event's `evt_…` id, as the receiver sees it in the body. */
  eventId: string;
  attempt: number;
  url: string;
  secret: string;
  webhookDeleted: boolean;
  payload: string;
}

export interface ClaimLimits {
  /** Deliveries claimed at most from the shared slots (a brand's first place may go past it: see below). */
  limit: number;
  /** Deliveries of one webhook in flight at most, those already in flight (`inFlight`) included. */
  perWebhook?: number;
  /** Deliveries of one brand in flight at most, those already in flight (`inFlightByBrand`) included. */
  perBrand?: number;
  /** Attempts this worker has in flight, by webhook id. */
  inFlight?: ReadonlyMap<string, number>;
  /** Attempts this worker has in flight, by brand id. */
  inFlightByBrand?: ReadonlyMap<string, number>;
}

function literalBound(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/**
 * Claims due deliveries with a lease: `next_attempt_at` moves past the attempt's time-out, so the
 * row is not claimed again while it is being sent, yet a worker that dies mid-attempt leaves it to
 * be retried once the lease runs out. SKIP LOCKED lets several processes claim side by side.
 *
 * Fair by brand (docs/architecture.md, "Fair delivery"): the due deliveries are dealt out in
 * rounds, one per brand a round, counting what each brand already has in flight here, so the
 * brand with the fewest attempts in flight is served first, and each brand's oldest due delivery
 * before its newer ones. No brand gets more than `perBrand` places, no webhook more than
 * `perWebhook`. `limit` bounds the claim, except that a brand with nothing in flight here always
 * gets its first place: however many slots other brands' hanging receivers hold, a brand with
 * work due has an attempt under way.
 */
export async function claimDueDeliveries(
  db: Queryable,
  now: Date,
  leaseUntil: Date,
  {
    limit,
    perWebhook = Math.max(limit, 1),
    perBrand = Math.max(limit, 1),
    inFlight = new Map(),
    inFlightByBrand = new Map(),
  }: ClaimLimits,
): Promise<ClaimedDelivery[]> {
  // Written into the statement rather than passed: with a literal LIMIT the planner knows each
  // webhook yields a few rows (a parameter there makes it plan for thousands, hash-join and JIT).
  const hookBound = literalBound("perWebhook", perWebhook);
  const brandBound = literalBound("perBrand", perBrand);
  // Left out before any index is read: webhooks at their cap, and brands that can get no place
  // (at their share; with no slot free, every brand with an attempt in flight). With every slot
  // held by hanging receivers, a claim then reads only the webhooks of brands with nothing in flight.
  const fullWebhooks = [...inFlight].filter(([, count]) => count >= hookBound).map(([id]) => id);
  const fullBrands = [...inFlightByBrand]
    .filter(([, count]) => count >= (limit > 0 ? brandBound : 1))
    .map(([id]) => id);
  const rows = await db.query<{
    id: string;
    webhook_id: string;
    brand_id: string;
    event_id: string;
    attempt: number;
    url: string;
    secret: string;
    deleted_at: Date | null;
    payload: string;
  }>(
    `WITH busy AS (
       SELECT * FROM unnest($4::uuid[], $5::int[]) AS b (webhook_id, in_flight)
     ),
     busy_brands AS (
       SELECT * FROM unnest($6::uuid[], $7::int[]) AS b (brand_id, in_flight)
     ),
     -- Per webhook, its oldest due deliveries, as many as it has places left: one short range of
     -- an index each, so another webhook's backlog costs nothing here.
     per_webhook AS (
       SELECT c.id, w.brand_id, c.next_attempt_at
       FROM webhooks w
       LEFT JOIN busy b ON b.webhook_id = w.id
       CROSS JOIN LATERAL (
         SELECT d.id, d.next_attempt_at, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS place
         FROM webhook_deliveries d
         WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= $1
         ORDER BY d.next_attempt_at, d.id
         LIMIT ${hookBound}
       ) c
       WHERE c.place + coalesce(b.in_flight, 0) <= ${hookBound}
         AND w.id <> ALL ($8::uuid[]) AND w.brand_id <> ALL ($9::uuid[])
     ),
     -- The round of each candidate: what its brand has in flight here plus its place among the
     -- brand's candidates, oldest first. Round 1 is a brand's first attempt in flight.
     per_brand AS (
       SELECT p.id, p.next_attempt_at,
              coalesce(b.in_flight, 0) + row_number() OVER (PARTITION BY p.brand_id ORDER BY p.next_attempt_at, p.id) AS round
       FROM per_webhook p
       LEFT JOIN busy_brands b ON b.brand_id = p.brand_id
     ),
     dealt AS (
       SELECT id, round, row_number() OVER (ORDER BY round, next_attempt_at, id) AS ordinal
       FROM per_brand
       WHERE round <= ${brandBound}
     ),
     -- The conditions are repeated on the locked row: PostgreSQL re-checks them on the newest
     -- version of a row another process changed meanwhile, so a delivery just claimed or
     -- finished elsewhere is skipped, not sent twice.
     due AS (
       SELECT d.id FROM webhook_deliveries d
       WHERE d.id = ANY (ARRAY(SELECT id FROM dealt WHERE ordinal <= $3 OR round = 1))
         AND d.status = 'pending' AND d.next_attempt_at <= $1
       FOR UPDATE SKIP LOCKED
     )
     UPDATE webhook_deliveries d SET next_attempt_at = $2
     FROM due, webhooks w, webhook_events e
     WHERE d.id = due.id AND w.id = d.webhook_id AND e.id = d.event_id
     RETURNING d.id, d.webhook_id, w.brand_id, d.event_id, d.attempt, w.url, w.secret, w.deleted_at, e.payload`,
    [
      now,
      leaseUntil,
      limit,
      [...inFlight.keys()],
      [...inFlight.values()],
      [...inFlightByBrand.keys()],
      [...inFlightByBrand.values()],
      fullWebhooks,
      fullBrands,
    ],
  );
  return rows.map((row) => ({
    id: row.id,
    webhookId: row.webhook_id,
    brandId: row.brand_id,
    eventId: row.event_id,
    attempt: row.attempt,
    url: row.url,
    secret: row.secret,
    webhookDeleted: row.deleted_at !== null,
    payload: row.payload,
  }));
}

export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  at: Date;
  signatureT: number;
  responseStatus: number | null;
  /** The start of the receiver's answer, as text; null when it gave none. */
  responseBody: string | null;
  error: string | null;
  /** From sending to the answer or the failure, measured (not read off the injected clock). */
  durationMs: number;
  /** null: no further attempt (succeeded or failed for good). */
  nextAttemptAt: Date | null;
  status: DeliveryStatus;
}

/**
 * Records attempts and their deliveries' new states, in one statement however many. A delivery
 * is updated only while it is pending at the attempt before this one: a result that arrives after
 * its lease ran out and another attempt was recorded changes nothing (its attempt row is kept).
 */
export async function recordAttempts(db: Queryable, records: readonly AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.query(
    `WITH r AS (
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::bigint[], $5::int[], $6::text[], $7::timestamptz[], $8::text[], $9::int[], $10::text[])
         AS r (delivery_id, attempt, at, signature_t, response_status, error, next_attempt_at, status, duration_ms, response_body)
     ),
     attempts AS (
       INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, signature_t, response_status, error, duration_ms, response_body)
       SELECT delivery_id, attempt, at, signature_t, response_status, error, duration_ms, response_body FROM r
       ON CONFLICT DO NOTHING
     )
     UPDATE webhook_deliveries d
     SET status = r.status, attempt = r.attempt, last_attempt_at = r.at, response_status = r.response_status, error = r.error, next_attempt_at = r.next_attempt_at
     FROM r
     WHERE d.id = r.delivery_id AND d.status = 'pending' AND d.attempt = r.attempt - 1`,
    [
      records.map((record) => record.deliveryId),
      records.map((record) => record.attempt),
      records.map((record) => record.at),
      records.map((record) => record.signatureT),
      records.map((record) => record.responseStatus),
      records.map((record) => record.error),
      records.map((record) => record.nextAttemptAt),
      records.map((record) => record.status),
      records.map((record) => record.durationMs),
      records.map((record) => record.responseBody),
    ],
  );
}

export interface PendingWork {
  /** When the earliest pending delivery is (or was) due; null when none is pending. */
  nextDueAt: Date | null;
  /** Whether events wait to be expanded into deliveries. */
  eventsToFanOut: boolean;
}

/**
 * What the worker looks at before it claims: one short read, so an idle worker (which compares
 * `nextDueAt` with the clock itself) writes nothing.
 */
export async function pendingWork(db: Queryable): Promise<PendingWork> {
  const [row] = await db.query<{ next_due_at: Date | string | null; fan_out: boolean }>(
    `SELECT (SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending') AS next_due_at,
            EXISTS (SELECT 1 FROM webhook_events WHERE pending_webhook_ids IS NOT NULL) AS fan_out`,
  );
  return { nextDueAt: row?.next_due_at ? new Date(row.next_due_at) : null, eventsToFanOut: row?.fan_out === true };
}
