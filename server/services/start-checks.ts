import { assertCanAfford, projectedCostCents } from "../domain/billing.ts";
import { ApiError } from "../domain/errors.ts";
import { pricePerMinuteCents } from "../domain/plans.ts";
import type { Brand, Mode } from "../domain/types.ts";
import { creatorExists } from "../store/creators.ts";
import type { Queryable } from "../store/database.ts";
import { activeStreamIds, countActiveStreams } from "../store/streams.ts";

/** What a start asks for, as far as the checks below read it. */
export interface StartRequest {
  creator_id: string;
  duration_minutes?: number;
}

/** What the checks settled: the stream's price and the hold taken from the wallet (0 with test keys). */
export interface StartCharges {
  price: number;
  holdCents: number;
}

/**
 * The checks of POST /streams that read the database, in the documented order (DESIGN.md §5),
 * one implementation for test and live keys:
 * 1. the creator is listed (400 invalid_creator);
 * 2. the concurrency limit: fewer than the brand's `max_active_streams` streams preparing or live
 *    in the key's mode (429 concurrency_limit);
 * 3. live keys only: plan minutes left, then credits for the hold (402 no_minutes,
 *    insufficient_credits).
 * `brand` must have been read under the brand lock (store/brand-lock.ts) in the transaction that
 * then inserts the stream, so the count sees every start of the brand committed before it, from
 * any process. (The vertical, which needs no database, is checked before: services/streams.ts.)
 */
export async function checkStart(tx: Queryable, brand: Brand, mode: Mode, input: StartRequest): Promise<StartCharges> {
  if (!(await creatorExists(tx, input.creator_id))) {
    throw new ApiError(
      "invalid_creator",
      `creator_id "${input.creator_id}" matches no listed creator; use an id from GET /creators.`,
    );
  }
  await checkConcurrencyLimit(tx, brand, mode);
  if (mode === "test") return { price: 0, holdCents: 0 };
  const price = pricePerMinuteCents(brand.plan);
  const holdCents = projectedCostCents(input.duration_minutes!, price);
  assertCanAfford(brand, holdCents);
  return { price, holdCents };
}

/** Active streams a concurrency_limit message names at most (a raised limit can be large). */
const ACTIVE_NAMED = 10;

/**
 * The brand's concurrency limit, per mode (see checkStart). The refusal names the active streams
 * and how to end one, so the caller need not list them first.
 */
async function checkConcurrencyLimit(tx: Queryable, brand: Brand, mode: Mode): Promise<void> {
  const maxActive = brand.maxActiveStreams;
  const scope = { brandId: brand.id, mode };
  if ((await countActiveStreams(tx, scope)) < maxActive) return;
  const ids = await activeStreamIds(tx, scope, ACTIVE_NAMED + 1);
  const named =
    ids.length === 0 ? "" : ` (${ids.slice(0, ACTIVE_NAMED).join(", ")}${ids.length > ACTIVE_NAMED ? ", …" : ""})`;
  throw new ApiError(
    "concurrency_limit",
    `The brand already has ${maxActive} active streams in ${mode} mode${named}; end one with DELETE /streams/{id} before starting another. Retrying does not clear this.`,
  );
}
