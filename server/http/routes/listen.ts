import type { Response } from "express";
import { webhookEventTypeValues } from "../../../generated/api.ts";
import { ApiError } from "../../domain/errors.ts";
import type { ServiceContext } from "../../services/context.ts";
import { EventFeed, FEED_BATCH } from "../../services/event-feed.ts";
import type { FedEvent } from "../../store/event-feed.ts";
import type { Logger } from "../../observability/logger.ts";
import type { OperationHandlers } from "../dispatch.ts";
import { callerOf } from "../guard.ts";
import { markStreaming } from "../transport.ts";
import { withoutDatabaseBudget } from "../../store/request-budget.ts";

const EVENT_STREAM = "text/event-stream; charset=utf-8";

export interface ListenTimings {
  /** How often an open stream reads the events table. */
  pollMs: number;
  /** A comment line this often while no event comes, so proxies and the client see the stream alive. */
  heartbeatMs: number;
  /** Bytes written and not yet taken by a client before it is cut off (it may resume). */
  maxBufferedBytes: number;
  /**
   * Streams one brand may hold open on this process at once. Each one reads the events table
   * every `pollMs`; without a bound, one brand's forgotten listeners would load the database
   * for every brand.
   */
  maxOpenPerBrand: number;
}

export const DEFAULT_LISTEN_TIMINGS: ListenTimings = {
  pollMs: 500,
  heartbeatMs: 15_000,
  maxBufferedBytes: 1024 * 1024,
  maxOpenPerBrand: 10,
};

/** The event streams each brand holds open on this process, within its bound. */
class OpenStreams {
  private readonly open = new Map<string, number>();
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }

  /** Counts one more stream of the brand, or refuses it; the function returned ends the count. */
  take(brandId: string): () => void {
    const count = this.open.get(brandId) ?? 0;
    if (count >= this.max)
      throw new ApiError(
        "listen_limit",
        `This brand already has ${count} event streams (GET /webhooks/listen) open on this server process, the most it may hold; close one before opening another.`,
      );
    this.open.set(brandId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(brandId) ?? 1) - 1;
      if (left > 0) this.open.set(brandId, left);
      else this.open.delete(brandId);
    };
  }
}

/** One server-sent event: the delivery body is JSON on one line, so it is one `data:` line. */
function message(id: string, type: string, body: string): string {
  return `id: ${id}\nevent: ${type}\ndata: ${body}\n\n`;
}

export function listenHandlers(
  ctx: ServiceContext,
  { logger, timings = DEFAULT_LISTEN_TIMINGS }: { logger: Logger; timings?: ListenTimings },
): OperationHandlers<"listenTestEvents"> {
  const openStreams = new OpenStreams(timings.maxOpenPerBrand);

  return {
    async listenTestEvents(req, res) {
      const caller = callerOf(res);
      if (caller.mode !== "test")
        throw new ApiError("test_mode_only", "GET /webhooks/listen is a test-mode tool; use a test key (svc_test_…).");
      const lastEventId = req.headers["last-event-id"];
      const subscription = {
        brandId: caller.brand.id,
        mode: caller.mode,
        types: req.query.events ?? webhookEventTypeValues,
      };
      const feed = await EventFeed.open(
        ctx,
        subscription,
        // Empty is absent (the contract's default; an EventSource sends none before its first event).
        typeof lastEventId === "string" && lastEventId !== ""
          ? { kind: "after", eventId: lastEventId }
          : { kind: "now" },
      );
      if (!feed)
        throw new ApiError(
          "invalid_fields",
          `Last-Event-ID ${String(lastEventId)} names no test-mode event of this brand.`,
        );
      // Counted from here until the connection closes, whichever way it ends: a client gone while
      // the first read waits must not keep its place.
      const release = openStreams.take(caller.brand.id);
      res.once("close", release);
      try {
        // The first read comes before the answer begins: a database that cannot be read is a
        // 500 db_error, not a stream that opens and ends at once.
        const first = await feed.next();
        // HEAD is answered as GET without the body: the headers, then the end, not an empty stream held open.
        if (res.locals.head) return void res.status(200).type(EVENT_STREAM).end();
        // The stream's later reads are its own, each with a statement time-out: not the answer's time.
        await withoutDatabaseBudget(() =>
          streamEvents(
            res,
            feed,
            first,
            timings,
            logger.child({ request_id: res.locals.requestId, brand_id: caller.brand.id }),
          ),
        );
      } finally {
        release();
      }
    },
  };
}

/**
 * Writes the feed as server-sent events, `first` first, until the client goes or the server
 * stops. While the client keeps up, batches follow each other at once; while it is behind (what
 * was written is not yet taken), one batch per `pollMs` at most. Once more than
 * `maxBufferedBytes` waits for a client that stopped reading, it is cut off (it resumes with
 * Last-Event-ID), so a stalled client holds at most that much memory.
 */
async function streamEvents(
  res: Response,
  feed: EventFeed,
  first: FedEvent[],
  { pollMs, heartbeatMs, maxBufferedBytes }: ListenTimings,
  logger: Logger,
): Promise<void> {
  // The client left while the first read waited: its close has been and gone, nothing to stream.
  if (res.destroyed || !res.socket || res.socket.destroyed) return;
  res.status(200);
  res.setHeader("Content-Type", EVENT_STREAM);
  res.setHeader("Cache-Control", "no-cache, no-transform");
  // Proxies that buffer answers (nginx) pass this one through as it is written.
  res.setHeader("X-Accel-Buffering", "no");
  res.flushHeaders();
  // The answer is complete only when closed: no idle time-out of the socket may cut it.
  res.socket?.setTimeout(0);
  res.socket?.setNoDelay(true);

  let stopped = false;
  let wake: (() => void) | undefined;
  const stop = () => {
    stopped = true;
    wake?.();
  };
  res.on("close", stop);
  markStreaming(res, () => {
    stop();
    if (!res.writableEnded) res.end();
  });
  /** Waits `ms`, less when the server stops, or (`untilDrain`) when the client has taken what waited. */
  const pause = (ms: number, untilDrain = false) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      if (untilDrain) res.once("drain", done);
      function done() {
        clearTimeout(timer);
        res.off("drain", done);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  let lastWrite = Date.now();
  const write = (text: string) => {
    if (stopped) return;
    res.write(text);
    lastWrite = Date.now();
    if (res.writableLength > maxBufferedBytes) {
      logger.warn({ unread_bytes: res.writableLength }, "listen: client cut off, it stopped reading");
      res.destroy();
      stop();
    }
  };

  write(": connected\n\n");
  let events = first;
  try {
    while (!stopped) {
      for (const event of events) write(message(event.id, event.type, event.body));
      if (events.length === 0 && Date.now() - lastWrite >= heartbeatMs) write(": keep-alive\n\n");
      // Node holds a response's writes until the next tick (cork), which a database answering
      // in microtasks (the embedded one) would never let come: the batch goes to the socket now.
      await new Promise(setImmediate);
      if (res.writableNeedDrain) await pause(pollMs, true);
      // A full batch: more may be waiting.
      else if (events.length < FEED_BATCH) await pause(pollMs);
      if (stopped) break;
      events = await feed.next();
    }
  } catch (error) {
    // The database failed mid-stream: the answer cannot turn into an error, so it ends; the
    // client resumes with Last-Event-ID and misses nothing.
    logger.warn(
      { error: error instanceof Error ? error.message : String(error) },
      "listen: stream ended, the events could not be read",
    );
  } finally {
    res.off("close", stop);
    if (!res.writableEnded && !res.destroyed) res.end();
  }
}
