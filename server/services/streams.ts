import { randomBytes, randomUUID } from "node:crypto";
import { ApiError } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import { nextDueAt } from "../domain/lifecycle.ts";
import { verticalProblem } from "../domain/vertical.ts";
import type { Brand, Mode, NewStream, SimTrigger, Stream, StreamScope, Vertical } from "../domain/types.ts";
import { LaunchError } from "../providers/agent-provider.ts";
import { lockBrand } from "../store/brand-lock.ts";
import { adjustWallet } from "../store/brands.ts";
import {
  findStream,
  findStreamWithClock,
  insertStream,
  lockStream,
  streamPage,
  updateStream,
} from "../store/streams.ts";
import type { OnCreated, ServiceContext } from "./context.ts";
import { recordStreamEvent } from "./events.ts";
import { advance, isDue, sweepDueStreams, transition } from "./lifecycle.ts";
import { releaseRoom, trackRoom } from "./provider-rooms.ts";
import { clockAt, scopeClock } from "./scope-clock.ts";
import { checkStart } from "./start-checks.ts";

export interface StartStreamInput {
  creator_id: string;
  product_name: string;
  platform: string;
  duration_minutes?: number;
  script?: string;
  vertical?: Vertical;
  /** Where the stream was started; startStream sets it from its options, never from a request body. */
  source?: "api" | "dashboard";
}

/** What a start reads of the caller's brand; the rest is read under the brand's lock. */
type StartingBrand = Pick<Brand, "id" | "vertical">;

const SIM_TRIGGERS: readonly SimTrigger[] = ["sim:launch-failed", "sim:never-joins", "sim:fails-live"];

/** Thrown after a failed launch: the stream exists in status error (answered 502 launch_failed). */
export class StreamLaunchFailed extends ApiError {
  readonly stream: Stream;
  constructor(stream: Stream) {
    super(
      "launch_failed",
      `The stream could not be launched; it exists in status error. Read it with GET /streams/${stream.id}; a retry creates a new stream.`,
    );
    this.stream = stream;
  }
}

function simTriggerOf(productName: string): SimTrigger | null {
  return SIM_TRIGGERS.find((trigger) => productName.includes(trigger)) ?? null;
}

/** The endpoint rules of POST /streams that need no database, in the documented order. */
function checkVertical(brand: StartingBrand, input: StartStreamInput): void {
  const problem = verticalProblem(brand.vertical, input);
  if (problem) throw new ApiError("vertical_mismatch", problem);
}

/**
 * The new stream's record, as stored, made at `now` (its scope's clock: a test-mode stream's
 * times are on its brand's test clock). A test-key stream is live at once unless a marker says
 * otherwise: `sim:launch-failed` stores it in `error`; `sim:never-joins` leaves it `preparing`
 * until the preparing time-out, as a live stream whose host never joins.
 */
function newStream(
  ctx: ServiceContext,
  brand: StartingBrand,
  mode: Mode,
  input: StartStreamInput,
  simTrigger: SimTrigger | null,
  price: number,
  holdCents: number,
  now: Date,
): NewStream {
  const launchFails = mode === "test" && simTrigger === "sim:launch-failed";
  const neverJoins = mode === "test" && simTrigger === "sim:never-joins";
  const liveAtOnce = mode === "test" && !launchFails && !neverJoins;
  return {
    id: randomUUID(),
    brandId: brand.id,
    mode,
    status: launchFails ? "error" : liveAtOnce ? "live" : "preparing",
    creatorId: input.creator_id,
    productName: input.product_name,
    platform: input.platform,
    vertical: input.vertical ?? brand.vertical,
    source: input.source ?? "api",
    durationMinutes: input.duration_minutes ?? null,
    roomName: `room_${randomBytes(9).toString("base64url")}`,
    wsUrl: null,
    viewerToken: null,
    agentDispatched: null,
    dispatchMethod: null,
    viewerCount: 0,
    createdAt: now,
    startedAt: liveAtOnce ? now : null,
    endedAt: launchFails ? now : null,
    joinAt: null,
    failAt: mode === "test" && simTrigger === "sim:fails-live" ? new Date(now.getTime() + ctx.simAgentJoinMs) : null,
    timeoutAt: mode === "live" || neverJoins ? new Date(now.getTime() + ctx.preparingTimeoutMs) : null,
    simTrigger,
    pricePerMinuteCents: price,
    holdCents,
    billedMinutes: null,
    chargedCents: null,
  };
}

/**
 * POST /streams. Live keys: the stream is stored in `preparing` with its billing hold, then the
 * provider creates the room and dispatches the agent outside the transaction. Test keys: the stream
 * is live at once, nothing is dispatched or billed. `onCreated` runs in the creating transaction,
 * so whatever it records commits or rolls back with the stream.
 */
export async function startStream(
  ctx: ServiceContext,
  brand: StartingBrand,
  mode: Mode,
  body: StartStreamInput,
  { onCreated, source = "api" }: { onCreated?: OnCreated; source?: "api" | "dashboard" } = {},
): Promise<Stream> {
  const input = { ...body, source };
  checkVertical(brand, input);
  const simTrigger = mode === "test" || ctx.provider.simulated ? simTriggerOf(input.product_name) : null;
  const created = await insertCheckedStream(ctx, brand, mode, input, simTrigger, onCreated);
  if (created.status === "error") throw new StreamLaunchFailed(created);
  if (mode === "test") return created;
  return launch(ctx, created, input.script ?? null);
}

/**
 * The stream, stored once the start's checks pass (services/start-checks.ts), under the brand
 * lock, in one transaction with its wallet hold (live keys), its event (test keys: the stream is
 * live, or failed, at once) and whatever `onCreated` records.
 */
async function insertCheckedStream(
  ctx: ServiceContext,
  brand: StartingBrand,
  mode: Mode,
  input: StartStreamInput,
  simTrigger: SimTrigger | null,
  onCreated?: OnCreated,
): Promise<Stream> {
  return ctx.db.transaction(async (tx) => {
    const locked = await lockBrand(tx, brand.id);
    if (!locked) throw new ApiError("unauthorized");
    const { price, holdCents } = await checkStart(tx, locked, mode, input);
    // Made once the start's turn has come, so a brand's streams are created in commit order; on
    // the scope's clock, read under the brand's lock (an advance takes it too).
    const now = await scopeClock(ctx, tx, { brandId: brand.id, mode });
    const made = newStream(ctx, brand, mode, input, simTrigger, price, holdCents, now);
    const stream = await insertStream(tx, made, input.script ?? null);
    // A test stream's event at once: it went live, or failed; one left preparing has none yet.
    if (mode === "test" && stream.status !== "preparing")
      await recordStreamEvent(
        tx,
        stream.status === "error" ? "stream.error" : "stream.started",
        stream,
        stream.createdAt,
      );
    await onCreated?.(tx, stream.id);
    if (holdCents > 0) await adjustWallet(tx, brand.id, { creditsHeldCents: holdCents });
    return stream;
  });
}

async function launch(ctx: ServiceContext, stream: Stream, script: string | null): Promise<Stream> {
  const scope = { brandId: stream.brandId, mode: stream.mode };
  try {
    await trackRoom(ctx, stream);
    const {
      id: streamId,
      roomName,
      mode,
      simTrigger,
      createdAt: now,
      creatorId,
      productName,
      platform,
      vertical,
      durationMinutes,
    } = stream;
    const result = await ctx.provider.launch({
      streamId,
      roomName,
      mode,
      simTrigger,
      now,
      creatorId,
      productName,
      platform,
      vertical,
      script,
      durationMinutes,
    });
    return await ctx.db.transaction(async (tx) => {
      const current = (await lockStream(tx, scope, stream.id))!;
      // A real agent may have joined (and its webhook been applied) before the dispatch call returned.
      if (current.status !== "preparing" && !(current.status === "live" && current.wsUrl === null)) return current;
      const launched = { ...current, ...result };
      await updateStream(tx, launched);
      // With a join time of zero the agent is already in the room.
      return advance(tx, ctx, launched, ctx.clock());
    });
  } catch (error) {
    if (!(error instanceof LaunchError)) throw error;
    const failed = await ctx.db.transaction(async (tx) => {
      const current = (await lockStream(tx, scope, stream.id))!;
      if (current.status !== "preparing") return current;
      return transition(tx, ctx, current, { to: "error", at: ctx.clock() });
    });
    // Room creation may have succeeded before the dispatch failed.
    await releaseRoom(ctx, failed);
    throw new StreamLaunchFailed(failed);
  }
}

/**
 * GET /streams/{id}: 404 for an unknown id or another brand's or mode's stream. (A failed lookup
 * is a 404 too, as the spec requires: the error handler answers it and logs it.)
 */
export async function getStream(ctx: ServiceContext, scope: StreamScope, id: string): Promise<Stream> {
  return (await readStream(ctx, scope, id)).stream;
}

/** getStream, with the scope's clock (`now`) the stream is up to date with, for what is reckoned from it (viewers). */
export async function readStream(
  ctx: ServiceContext,
  scope: StreamScope,
  id: string,
): Promise<{ stream: Stream; now: Date }> {
  if (!isUuid(id)) throw notFound(id);
  const found = await findStreamWithClock(ctx.db, scope, id);
  if (!found) throw notFound(id);
  let { stream } = found;
  const now = clockAt(ctx.clock(), found.clockOffsetSeconds);
  // Only this stream's own deadlines matter to the answer; when one has passed, the brand's due
  // streams are brought up to date (as the sweeper would) and the stream read again.
  if (isDue(nextDueAt(stream), now)) {
    // The stream exists: a failed catch-up (say, a lock conflict with a sweeper in another
    // process, which will make the same transition) must not turn it into a 404. It is then
    // answered as last stored.
    const caughtUp = await sweepDueStreams(ctx, { scope }).then(
      () => true,
      () => false,
    );
    if (caughtUp) stream = (await findStream(ctx.db, scope, id)) ?? stream;
  }
  return { stream, now };
}

/**
 * DELETE /streams/{id}: only a live stream can be ended; anything else is 404. (A server-side
 * failure is a 404 too, as the contract lists no 500 here: the error handler answers it and logs it.)
 * `onEnded` runs in the transaction that ends it.
 */
export async function endStream(
  ctx: ServiceContext,
  scope: StreamScope,
  id: string,
  { onEnded }: { onEnded?: OnCreated | undefined } = {},
): Promise<Stream> {
  assertStreamId(id);
  const ended = await ctx.db.transaction(async (tx) => {
    const found = await lockStream(tx, scope, id);
    if (!found) throw notFound(id);
    const now = await scopeClock(ctx, tx, scope);
    // A deadline that passed before this request (scheduled end, failure) has already ended it.
    const current = await advance(tx, ctx, found, now);
    if (current.status !== "live") {
      throw new ApiError(
        "not_found",
        `Stream ${id} is not live (status ${current.status}); only a live stream can be ended.`,
      );
    }
    const ending = await transition(tx, ctx, current, { to: "ended", at: now });
    await onEnded?.(tx, id);
    return ending;
  });
  await releaseRoom(ctx, ended);
  return ended;
}

export interface ListQuery {
  status: string | null;
  limit: number;
  offset: number;
}

/** A page of the scope's streams, up to date with the scope's clock, which comes with it (`now`). */
export async function listBrandStreams(
  ctx: ServiceContext,
  scope: StreamScope,
  query: ListQuery,
): Promise<{ streams: Stream[]; total: number; now: Date }> {
  // The page comes with the scope's next deadline and clock; only when a deadline has passed is
  // there a sweep.
  let page = await streamPage(ctx.db, scope, query);
  const now = clockAt(ctx.clock(), page.clockOffsetSeconds);
  if (isDue(page.nextDueAt, now)) {
    await sweepDueStreams(ctx, { scope });
    page = await streamPage(ctx.db, scope, query);
  }
  return { streams: page.streams, total: page.total, now };
}

/** A stream id that is not a UUID names no stream: 404, as the spec has it, not 400. */
export function assertStreamId(id: string): void {
  if (!isUuid(id)) throw notFound(id);
}

function notFound(id: string): ApiError {
  return new ApiError("not_found", `No stream with id ${id}.`);
}
