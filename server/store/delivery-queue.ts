import type { DeliveryStatus, Mode } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import { columnsOf, named } from "./statements.ts";

export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  brandId: string;
  /** The event's `evt_…` id, as the receiver sees it in the body. */
  eventId: string;
  /** The series of attempts (0 from the event; one more each time it is sent again on request) and the attempts made in it. */
  series: number;
  attempt: number;
  url: string;
  secret: string;
  webhookDeleted: boolean;
  payload: string;
  /** The webhook's mode, the delivery's. */
  mode: Mode;
  /** When the attempt fell due, on the clock of its scope (a test-mode brand's test clock). */
  dueAt: Date;
  /** The scope's test-clock offset when claimed (0 in live mode): its clock is the real time plus it. */
  clockOffsetSeconds: number;
}

export interface ClaimLimits {
  /** Deliveries claimed at most from the shared slots. */
  limit: number;
  /**
   * Places beyond `limit`, only for the first attempt of a brand with nothing in flight (default
   * 0): the reserve that lets such a brand start while other brands' attempts hold every slot.
   */
  firstPlaces?: number;
  /** Deliveries of one webhook in flight at most, those already in flight (`inFlight`) included. */
  perWebhook?: number;
  /** Deliveries of one brand in flight at most, those already in flight (`inFlightByBrand`) included. */
  perBrand?: number;
  /** Attempts this worker has in flight, by webhook id. */
  inFlight?: ReadonlyMap<string, number>;
  /** Attempts this worker has in flight, by brand id. */
  inFlightByBrand?: ReadonlyMap<string, number>;
}

/**
 * What a claim leaves out before reading any index, and what the pending-work look leaves out too:
 * webhooks at their cap, and brands that can get no place (at their share; with no shared slot
 * free, every brand with an attempt in flight, since only a brand's first place may come from the
 * reserve).
 */
export function fullOnes({
  limit,
  perWebhook = Math.max(limit, 1),
  perBrand = Math.max(limit, 1),
  inFlight = new Map(),
  inFlightByBrand = new Map(),
}: ClaimLimits): { webhooks: string[]; brands: string[] } {
  return {
    webhooks: [...inFlight].filter(([, count]) => count >= perWebhook).map(([id]) => id),
    brands: [...inFlightByBrand].filter(([, count]) => count >= (limit > 0 ? perBrand : 1)).map(([id]) => id),
  };
}

/** SQL: the offset of `tc` (a LEFT JOIN of test_clocks, on the brand of a test-mode webhook) as an interval; zero without a row. */
const OFFSET_OF_TC = "coalesce(tc.offset_seconds, 0) * interval '1 second'";

/** SQL: the test-clock offset in seconds of the delivery `d`'s scope: its brand's, if its webhook is of test mode; else 0. */
const OFFSET_OF_DELIVERY = `coalesce((SELECT tc.offset_seconds FROM webhooks w JOIN test_clocks tc ON tc.brand_id = w.brand_id
         WHERE w.id = d.webhook_id AND w.mode = 'test'), 0)`;

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
 * `now` and `leaseUntil` are real times. A test-mode delivery's times are on its brand's test
 * clock (migration 032): it is due when `next_attempt_at` has come by `now` plus the brand's
 * offset, its lease runs to `leaseUntil` plus the offset, and among brands it is dealt by its due
 * time brought back to the real clock. (An advance made while an attempt is in flight may end its
 * lease early: the attempt may then be made twice, as after a lost lease; only one is recorded.)
 *
 * Fair by brand (docs/architecture.md, "Fair delivery"): the due deliveries are dealt out in
 * rounds, one per brand a round, counting what each brand already has in flight here, so the
 * brand with the fewest attempts in flight is served first, and each brand's oldest due delivery
 * before its newer ones. No brand gets more than `perBrand` places, no webhook more than
 * `perWebhook`. At most `limit` rows come from the shared slots and at most `firstPlaces` more,
 * each the first attempt of a brand with nothing in flight here: however many slots other brands'
 * hanging receivers hold, a brand with work due gets an attempt under way while the reserve lasts.
 *
 * Also returns how many rows were picked before locking: a claim that got fewer (another process
 * locked them first, SKIP LOCKED) should be tried again rather than taken for "nothing to do".
 */
/** The parameters of a claim's statement. */
interface ClaimValues {
  now: Date;
  leaseUntil: Date;
  limit: number;
  /** The webhooks and brands with attempts in flight here, and how many each. */
  busyWebhooks: string[];
  busyWebhookCounts: number[];
  busyBrands: string[];
  busyBrandCounts: number[];
  /** Those at their share, left out. */
  fullWebhooks: string[];
  fullBrands: string[];
  /** The reserve's places (ClaimLimits.firstPlaces). */
  reserve: number;
}

export async function claimDueDeliveries(
  db: Queryable,
  now: Date,
  leaseUntil: Date,
  limits: ClaimLimits,
): Promise<{ claimed: ClaimedDelivery[]; picked: number }> {
  const {
    limit,
    firstPlaces = 0,
    perWebhook = Math.max(limit, 1),
    perBrand = Math.max(limit, 1),
    inFlight = new Map(),
    inFlightByBrand = new Map(),
  } = limits;
  // Written into the statement rather than passed: with a literal LIMIT the planner knows each
  // webhook yields a few rows (a parameter there makes it plan for thousands, hash-join and JIT).
  const hookBound = literalBound("perWebhook", perWebhook);
  const brandBound = literalBound("perBrand", perBrand);
  // With every slot held by hanging receivers, a claim reads only the webhooks of brands with
  // nothing in flight.
  const full = fullOnes({ ...limits, perWebhook: hookBound, perBrand: brandBound });
  if (limit + firstPlaces <= 0) return { claimed: [], picked: 0 };
  const claim = named<ClaimValues>(
    `WITH busy AS (
       SELECT * FROM unnest($busyWebhooks::uuid[], $busyWebhookCounts::int[]) AS b (webhook_id, in_flight)
     ),
     busy_brands AS (
       SELECT * FROM unnest($busyBrands::uuid[], $busyBrandCounts::int[]) AS b (brand_id, in_flight)
     ),
     -- Per webhook, its oldest due deliveries, as many as it has places left: one short range of
     -- an index each, so another webhook's backlog costs nothing here.
     -- A test-mode webhook's deliveries are due on its brand's test clock: now plus its offset.
     per_webhook AS (
       SELECT c.id, w.brand_id, c.next_attempt_at - ${OFFSET_OF_TC} AS next_attempt_at
       FROM webhooks w
       LEFT JOIN busy b ON b.webhook_id = w.id
       LEFT JOIN test_clocks tc ON w.mode = 'test' AND tc.brand_id = w.brand_id
       CROSS JOIN LATERAL (
         SELECT d.id, d.next_attempt_at, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS place
         FROM webhook_deliveries d
         WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= $now::timestamptz + ${OFFSET_OF_TC}
         ORDER BY d.next_attempt_at, d.id
         LIMIT ${hookBound}
       ) c
       WHERE c.place + coalesce(b.in_flight, 0) <= ${hookBound}
         AND w.id <> ALL ($fullWebhooks::uuid[]) AND w.brand_id <> ALL ($fullBrands::uuid[])
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
     -- The shared slots first, then the reserve: round-1 rows come first in the dealing, so the
     -- rows past the slots are first attempts of brands with nothing in flight.
     picked AS (
       SELECT ARRAY(SELECT id FROM dealt WHERE ordinal <= $limit OR (round = 1 AND ordinal <= $limit + $reserve)) AS ids
     ),
     -- The conditions are repeated on the locked row: PostgreSQL re-checks them on the newest
     -- version of a row another process changed meanwhile, so a delivery just claimed or
     -- finished elsewhere is skipped, not sent twice.
     due AS (
       SELECT d.id, d.next_attempt_at AS due_at, ${OFFSET_OF_DELIVERY} AS clock_offset_seconds
       FROM webhook_deliveries d
       WHERE d.id = ANY ((SELECT ids FROM picked)::uuid[])
         AND d.status = 'pending' AND d.next_attempt_at <= $now::timestamptz + ${OFFSET_OF_DELIVERY} * interval '1 second'
       FOR UPDATE SKIP LOCKED
     ),
     claimed AS (
       UPDATE webhook_deliveries d SET next_attempt_at = $leaseUntil::timestamptz + due.clock_offset_seconds * interval '1 second'
       FROM due, webhooks w, webhook_events e
       WHERE d.id = due.id AND w.id = d.webhook_id AND e.id = d.event_id
       RETURNING d.id, d.webhook_id, w.brand_id, d.event_id, d.series, d.attempt, w.url, w.secret, w.deleted_at, e.payload,
                 w.mode, due.due_at, due.clock_offset_seconds
     )
     -- One row with no delivery carries the number picked, so it is known even when none was claimed.
     SELECT c.*, NULL::int AS picked FROM claimed c
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, cardinality(ids) FROM picked`,
  );
  const rows = await db.query<{
    id: string;
    webhook_id: string;
    brand_id: string;
    event_id: string;
    series: number;
    attempt: number;
    url: string;
    secret: string;
    deleted_at: Date | null;
    payload: string;
    mode: Mode;
    due_at: Date | string;
    clock_offset_seconds: string | number;
    picked: number;
  }>(
    claim.text,
    claim.params({
      now,
      leaseUntil,
      limit,
      busyWebhooks: [...inFlight.keys()],
      busyWebhookCounts: [...inFlight.values()],
      busyBrands: [...inFlightByBrand.keys()],
      busyBrandCounts: [...inFlightByBrand.values()],
      fullWebhooks: full.webhooks,
      fullBrands: full.brands,
      reserve: literalBound("firstPlaces", firstPlaces + 1) - 1,
    }),
  );
  const picked = rows.find((row) => row.picked !== null)?.picked ?? 0;
  const claimed = rows
    .filter((row) => row.picked === null)
    .map((row) => ({
      id: row.id,
      webhookId: row.webhook_id,
      brandId: row.brand_id,
      eventId: row.event_id,
      series: row.series,
      attempt: row.attempt,
      url: row.url,
      secret: row.secret,
      webhookDeleted: row.deleted_at !== null,
      payload: row.payload,
      mode: row.mode,
      dueAt: new Date(row.due_at),
      clockOffsetSeconds: Number(row.clock_offset_seconds),
    }));
  return { claimed, picked: Number(picked) };
}

export interface AttemptRecord {
  deliveryId: string;
  /** The series the attempt belongs to (ClaimedDelivery.series). */
  series: number;
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

/** The fields of AttemptRecord, each passed to the statement as an array (one element per record) that it unnests. */
const ATTEMPT_FIELDS = [
  "deliveryId",
  "attempt",
  "at",
  "signatureT",
  "responseStatus",
  "error",
  "nextAttemptAt",
  "status",
  "durationMs",
  "responseBody",
  "series",
] as const satisfies ReadonlyArray<keyof AttemptRecord>;

const RECORD_ATTEMPTS = named<Record<(typeof ATTEMPT_FIELDS)[number], unknown[]>>(
  `WITH r AS (
       SELECT * FROM unnest($deliveryId::uuid[], $attempt::int[], $at::timestamptz[], $signatureT::bigint[], $responseStatus::int[], $error::text[], $nextAttemptAt::timestamptz[], $status::text[], $durationMs::int[], $responseBody::text[], $series::int[])
         AS r (delivery_id, attempt, at, signature_t, response_status, error, next_attempt_at, status, duration_ms, response_body, series)
     ),
     attempts AS (
       INSERT INTO webhook_attempts (delivery_id, series, attempt, attempted_at, signature_t, response_status, error, duration_ms, response_body, trigger, requested_by)
       SELECT r.delivery_id, r.series, r.attempt, r.at, r.signature_t, r.response_status, r.error, r.duration_ms, r.response_body,
              CASE WHEN r.attempt = 1 THEN d.series_trigger END, CASE WHEN r.attempt = 1 THEN d.series_requested_by END
       FROM r LEFT JOIN webhook_deliveries d ON d.id = r.delivery_id AND d.series = r.series
       ON CONFLICT DO NOTHING
     )
     UPDATE webhook_deliveries d
     SET status = r.status, attempt = r.attempt, last_attempt_at = r.at, response_status = r.response_status, error = r.error, next_attempt_at = r.next_attempt_at
     FROM r
     WHERE d.id = r.delivery_id AND d.status = 'pending' AND d.series = r.series AND d.attempt = r.attempt - 1`,
);

/**
 * Records attempts and their deliveries' new states, in one statement however many. A delivery
 * is updated only while it is pending at the attempt before this one, in the same series: a
 * result that arrives after its lease ran out and another attempt was recorded, or after the
 * delivery was sent again on request (a new series), changes nothing (its attempt row is kept).
 * The first attempt of a requested series records what asked for it.
 */
export async function recordAttempts(db: Queryable, records: readonly AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.query(RECORD_ATTEMPTS.text, RECORD_ATTEMPTS.params(columnsOf(records, ATTEMPT_FIELDS)));
}

export interface PendingWork {
  /**
   * When the earliest pending delivery is (or was) due, among those a claim could take (see
   * `fullOnes`); null when none is pending.
   */
  nextDueAt: Date | null;
  /** Whether events wait to be expanded into deliveries. */
  eventsToFanOut: boolean;
}

/**
 * What the worker looks at before it claims: one short read, so an idle worker (which compares
 * `nextDueAt` with the clock itself) writes nothing. Deliveries of webhooks and brands that can get
 * no place are left out, so another brand's retry falling due behind a full brand's backlog is
 * seen as new work. A test-mode delivery of a brand whose test clock was advanced counts with its
 * due time brought back to the real clock (its `next_attempt_at` less the brand's offset): a retry
 * an advance made due is due now.
 */
export async function pendingWork(
  db: Queryable,
  leaveOut: { webhooks: readonly string[]; brands: readonly string[] } = { webhooks: [], brands: [] },
): Promise<PendingWork> {
  const leavesOut = leaveOut.webhooks.length > 0 || leaveOut.brands.length > 0;
  const nextDue = !leavesOut
    ? `SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'`
    : // Per webhook left in, its oldest pending delivery: one short range of an index each.
      `SELECT min(c.next_attempt_at) FROM webhooks w CROSS JOIN LATERAL (
         SELECT d.next_attempt_at FROM webhook_deliveries d
         WHERE d.webhook_id = w.id AND d.status = 'pending'
         ORDER BY d.next_attempt_at LIMIT 1
       ) c
       WHERE w.id <> ALL ($1::uuid[]) AND w.brand_id <> ALL ($2::uuid[])`;
  // Per test-mode webhook of a brand with an advanced test clock, its oldest pending delivery.
  const aheadDue = `SELECT min(c.next_attempt_at - tc.offset_seconds * interval '1 second')
       FROM test_clocks tc
       JOIN webhooks w ON w.brand_id = tc.brand_id AND w.mode = 'test'
       CROSS JOIN LATERAL (
         SELECT d.next_attempt_at FROM webhook_deliveries d
         WHERE d.webhook_id = w.id AND d.status = 'pending'
         ORDER BY d.next_attempt_at LIMIT 1
       ) c
       WHERE tc.offset_seconds > 0${leavesOut ? " AND w.id <> ALL ($1::uuid[]) AND w.brand_id <> ALL ($2::uuid[])" : ""}`;
  const [row] = await db.query<{ next_due_at: Date | string | null; fan_out: boolean }>(
    `SELECT least((${nextDue}), (${aheadDue})) AS next_due_at,
            EXISTS (SELECT 1 FROM webhook_events WHERE pending_webhook_ids IS NOT NULL) AS fan_out`,
    leavesOut ? [leaveOut.webhooks, leaveOut.brands] : [],
  );
  return { nextDueAt: row?.next_due_at ? new Date(row.next_due_at) : null, eventsToFanOut: row?.fan_out === true };
}
