import type { ProviderRoom, Stream } from "../domain/types.ts";
import type { ProviderEvent, RoomState } from "../providers/agent-provider.ts";
import type { Queryable } from "../store/database.ts";
import {
  claimRoomsToCheck,
  claimRoomToClose,
  forgetProviderEventsBefore,
  insertProviderRoom,
  lockProviderRoom,
  lockProviderRoomByName,
  markRoomClosed,
  recordProviderEvent,
  updateProviderRoom,
} from "../store/provider-rooms.ts";
import { lockStream } from "../store/streams.ts";
import type { ServiceContext } from "./context.ts";
import { forgetExpiredIdempotencyKeys } from "./idempotency.ts";
import { forgetOldSignInAttempts } from "./members/sign-in-throttle.ts";
import { advance, sweepDueStreams, transition } from "./lifecycle.ts";

/**
 * The lifecycle of live-key streams on a real agent provider (one with a room service): the agent
 * joining moves a stream to live, the agent leaving for good or the room finishing ends it. News
 * comes from the provider's webhooks and, since those can be lost, from asking the room service
 * (the sweeper's checkProviderRooms). Every step is idempotent: a duplicate, late or out-of-order
 * report changes nothing that a newer one already decided.
 */

/** Provider event ids are remembered this long (a signed notification is valid for minutes). */
const EVENT_ID_RETENTION_MS = 24 * 60 * 60_000;

const isActive = (stream: Stream) => stream.status === "preparing" || stream.status === "live";
const later = (date: Date, ms: number) => new Date(date.getTime() + ms);

/** Before a live stream's launch: the record the provider's webhooks will find the stream by. */
export async function trackRoom(ctx: ServiceContext, stream: Stream): Promise<void> {
  const rooms = ctx.provider.rooms;
  if (!rooms || stream.mode !== "live") return;
  await insertProviderRoom(ctx.db, {
    streamId: stream.id,
    brandId: stream.brandId,
    roomName: stream.roomName,
    checkAt: later(ctx.clock(), rooms.checkIntervalMs),
  });
}

/**
 * After a stream left preparing/live by a request (DELETE, a failed launch): deletes its room at
 * once. A failure is left to the sweeper, which tries again after the check interval.
 */
export async function releaseRoom(ctx: ServiceContext, stream: Stream): Promise<void> {
  const rooms = ctx.provider.rooms;
  if (!rooms || stream.mode !== "live" || isActive(stream)) return;
  // The stream's change is committed: a failure here must not turn the answer into an error.
  try {
    const now = ctx.clock();
    const roomName = await claimRoomToClose(ctx.db, stream.id, now, later(now, rooms.checkIntervalMs));
    if (!roomName) return;
    await rooms.close(roomName);
    await markRoomClosed(ctx.db, stream.id, ctx.clock());
  } catch {
    // Left to the sweeper.
  }
}

/** Applies a verified provider webhook once; a repeated event id (a retry or a replay) changes nothing. */
export async function applyProviderEvent(ctx: ServiceContext, event: ProviderEvent): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const now = ctx.clock();
    if (!(await recordProviderEvent(tx, event.id, now))) return;
    const room = await lockProviderRoomByName(tx, event.roomName);
    if (!room) return;
    const stream = await lockStream(tx, { brandId: room.brandId, mode: "live" }, room.streamId);
    if (!stream) return;
    const step = new RoomStep(tx, ctx, room, stream, now);
    const at = event.at ?? now;
    if (event.kind === "agent_joined") await step.agentJoined(event.agent.identity, event.agent.joinedAt ?? at);
    else if (event.kind === "agent_left") await step.agentLeft(event.agent.identity, at, event.agent.joinedAt);
    else await step.roomGone(at);
    await step.save();
  });
}

/**
 * The sweeper's provider pass: asks the room service about rooms whose check is due (an active
 * stream not heard of for the check interval, an agent that left), and deletes the rooms of
 * streams that have ended (by DELETE, at their duration, after the time-out, on a failed launch).
 * A room service failure leaves the room for the next check. Returns the streams moved.
 */
export async function checkProviderRooms(
  ctx: ServiceContext,
  { batchSize = 50 }: { batchSize?: number } = {},
): Promise<number> {
  const rooms = ctx.provider.rooms;
  if (!rooms) return 0;
  const now = ctx.clock();
  await forgetProviderEventsBefore(ctx.db, new Date(now.getTime() - EVENT_ID_RETENTION_MS));
  let moved = 0;
  for (;;) {
    const claimed = await claimRoomsToCheck(ctx.db, now, later(now, rooms.checkIntervalMs), batchSize);
    for (const room of claimed) {
      if (room.streamStatus === "preparing" || room.streamStatus === "live") {
        const state = await rooms.inspect(room.roomName).catch(() => null);
        if (state) moved += await applyRoomState(ctx, room.streamId, state);
      } else if (
        await rooms.close(room.roomName).then(
          () => true,
          () => false,
        )
      ) {
        await markRoomClosed(ctx.db, room.streamId, ctx.clock());
      }
    }
    if (claimed.length < batchSize) return moved;
  }
}

async function applyRoomState(ctx: ServiceContext, streamId: string, state: RoomState): Promise<number> {
  return ctx.db.transaction(async (tx) => {
    const room = await lockProviderRoom(tx, streamId);
    if (!room) return 0;
    const stream = await lockStream(tx, { brandId: room.brandId, mode: "live" }, streamId);
    if (!stream) return 0;
    const step = new RoomStep(tx, ctx, room, stream, ctx.clock());
    if (!state.exists) await step.roomGone(step.now);
    else if (state.agent) await step.agentPresent(state.agent.identity, state.agent.joinedAt ?? step.now);
    else await step.agentMissing();
    await step.save();
    return step.stream.status === stream.status ? 0 : 1;
  });
}

/** One report about a room, applied to its locked stream and room record inside a transaction. */
class RoomStep {
  private readonly tx: Queryable;
  private readonly ctx: ServiceContext;
  private room: ProviderRoom;
  stream: Stream;
  readonly now: Date;
  private checkAt: Date;
  private closed = false;

  constructor(tx: Queryable, ctx: ServiceContext, room: ProviderRoom, stream: Stream, now: Date) {
    this.tx = tx;
    this.ctx = ctx;
    this.room = room;
    this.stream = stream;
    this.now = now;
    this.checkAt = later(now, ctx.provider.rooms!.checkIntervalMs);
  }

  /** The agent is in the room since `joinedAt`: a preparing stream goes live then. */
  async agentJoined(identity: string, joinedAt: Date): Promise<void> {
    if (!isActive(this.stream)) return;
    const at = this.clamp(joinedAt);
    // A join older than one already applied is a late duplicate of news already had.
    if (this.room.agentJoinedAt && at.getTime() < this.room.agentJoinedAt.getTime()) return;
    await this.goLive(at);
    const leftBefore = this.room.agentLeftAt && this.room.agentLeftAt.getTime() <= at.getTime();
    this.room = {
      ...this.room,
      agentIdentity: identity,
      agentJoinedAt: at,
      agentLeftAt: leftBefore ? null : this.room.agentLeftAt,
    };
  }

  /** The room service lists the agent: whatever departure was reported, it is back (or never left). */
  async agentPresent(identity: string, joinedAt: Date): Promise<void> {
    if (!isActive(this.stream)) return;
    await this.goLive(this.clamp(joinedAt));
    this.room = {
      ...this.room,
      agentIdentity: identity,
      agentJoinedAt: this.room.agentJoinedAt ?? this.clamp(joinedAt),
      agentLeftAt: null,
    };
  }

  /**
   * The agent left at `at`. The stream ends at that moment unless the agent is back in the room
   * by the next check (a reconnect). A departure reported before its join is news of both.
   */
  async agentLeft(identity: string, at: Date, joinedAt: Date | null): Promise<void> {
    if (this.stream.status === "preparing" && joinedAt) await this.agentJoined(identity, joinedAt);
    if (this.stream.status !== "live") return;
    if (this.room.agentIdentity !== null && identity !== this.room.agentIdentity) return;
    // A departure from before the agent's latest join is stale. Providers may date events in
    // whole seconds, so a departure within the second of the join still counts.
    if (this.room.agentJoinedAt && at.getTime() < Math.floor(this.room.agentJoinedAt.getTime() / 1000) * 1000) return;
    const leftAt = this.clamp(at);
    if (this.room.agentLeftAt && this.room.agentLeftAt.getTime() <= leftAt.getTime()) return;
    this.room = { ...this.room, agentLeftAt: leftAt };
    this.checkAt = later(leftAt, this.ctx.provider.rooms!.checkIntervalMs);
  }

  /**
   * The room service does not list the agent. A live stream whose agent was already missing at
   * the previous check ends when it was first missed; otherwise it is missed from now.
   */
  async agentMissing(): Promise<void> {
    if (this.stream.status !== "live") return;
    if (this.room.agentLeftAt) return this.finish(this.room.agentLeftAt);
    this.room = { ...this.room, agentLeftAt: this.now };
  }

  /** The room finished (or no longer exists): the stream ends, at the agent's departure if that came first. */
  async roomGone(at: Date): Promise<void> {
    this.closed = true;
    const left = this.room.agentLeftAt;
    await this.finish(left && left.getTime() < at.getTime() ? left : at);
  }

  async save(): Promise<void> {
    await updateProviderRoom(this.tx, this.room, this.checkAt);
    if (this.closed) await markRoomClosed(this.tx, this.room.streamId, this.now);
    // A report about the past may leave the stream past a deadline (its duration) by now.
    if (isActive(this.stream)) this.stream = await advance(this.tx, this.ctx, this.stream, this.now);
  }

  /** Live at `at`, unless the preparing time-out came first (the agent was too late). */
  private async goLive(at: Date): Promise<void> {
    if (this.stream.status !== "preparing") return;
    const current = await advance(this.tx, this.ctx, this.stream, at);
    this.stream =
      current.status === "preparing" ? await transition(this.tx, this.ctx, current, { to: "live", at }) : current;
  }

  /** Ended at `at` (error if the agent never joined), unless a deadline before `at` ended it first. */
  private async finish(at: Date): Promise<void> {
    if (!isActive(this.stream)) return;
    const when = this.clamp(at);
    const current = await advance(this.tx, this.ctx, this.stream, when);
    if (current.status === "live")
      this.stream = await transition(this.tx, this.ctx, current, { to: "ended", at: when });
    else if (current.status === "preparing")
      this.stream = await transition(this.tx, this.ctx, current, { to: "error", at: when });
    else this.stream = current;
  }

  /** A provider's time, kept within what the stream allows: not before it started (or was created), not after now. */
  private clamp(at: Date): Date {
    const floor = (this.stream.startedAt ?? this.stream.createdAt).getTime();
    return new Date(Math.min(Math.max(at.getTime(), floor), this.now.getTime()));
  }
}

/**
 * The lifecycle sweeper's whole pass: the streams' own deadlines, then the provider's rooms, then
 * Idempotency-Key records past their 24 hours, sign-in throttle rows untouched for as long, and
 * (through `forgetEnded`, services/members/retention.ts) sessions, invitations and reset links
 * that ended as long ago.
 */
export async function sweepStreamsAndRooms(
  ctx: ServiceContext,
  forgetEnded: (db: Queryable, now: Date) => Promise<number>,
): Promise<number> {
  const moved = await sweepDueStreams(ctx);
  const checked = await checkProviderRooms(ctx);
  await forgetExpiredIdempotencyKeys(ctx.db, ctx.clock());
  await forgetOldSignInAttempts(ctx.db, ctx.clock());
  await forgetEnded(ctx.db, ctx.clock());
  return moved + checked;
}
