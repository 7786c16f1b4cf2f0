import type { ServiceContext } from "../../services/context.ts";
import { currentViewerCount } from "../../services/lifecycle.ts";
import {
  assertStreamId,
  endStream,
  getStream,
  listBrandStreams,
  readStream,
  startStream,
  StreamLaunchFailed,
} from "../../services/streams.ts";
import type { OperationHandler, OperationHandlers } from "../dispatch.ts";
import { callerOf } from "../guard.ts";
import { idempotent } from "../idempotency.ts";
import { streamCreated, streamDetail, streamEnded, streamSummary } from "../response-bodies.ts";
import { tenancyOf } from "../tenancy.ts";

/** A page of the tenancy's streams: GET /streams and the dashboard's list of a mode's streams. */
export function listStreamsHandler(ctx: ServiceContext): OperationHandler<"listStreams" | "dashboardListStreams"> {
  return async (req, res) => {
    // Clamped (operation-rules.ts) and given the contract's defaults; `limit` and `offset` echo the request.
    const query = { status: req.query.status ?? null, limit: req.query.limit, offset: req.query.offset };
    // `now`: the tenancy's clock (a test-mode brand's test clock), which live viewer counts are reckoned on.
    const { streams, total, now } = await listBrandStreams(ctx, tenancyOf(req, res), query);
    res.json({
      streams: streams.map((stream) => streamSummary(stream, currentViewerCount(stream, now))),
      total,
      limit: query.limit,
      offset: query.offset,
    });
  };
}

/** One of the tenancy's streams: GET /streams/{id} and the dashboard's stream page. */
export function getStreamHandler(ctx: ServiceContext): OperationHandler<"getStream" | "dashboardGetStream"> {
  return async (req, res) => {
    const { stream, now } = await readStream(ctx, tenancyOf(req, res), req.params.id);
    res.json(streamDetail(stream, currentViewerCount(stream, now)));
  };
}

export function streamHandlers(
  ctx: ServiceContext,
): OperationHandlers<"createStream" | "listStreams" | "getStream" | "endStream"> {
  return {
    createStream: idempotent(ctx, {
      operation: "createStream",
      async run(req, res, onCreated) {
        const caller = callerOf(res);
        const stream = await startStream(ctx, caller.brand, caller.mode, req.body, { onCreated });
        return { status: 201, body: streamCreated(stream) };
      },
      // The stream as it is now: an attempt that died before launching it leaves it preparing
      // until the preparing time-out moves it to error, as any stream whose host never joins.
      async resume(req, res, streamId) {
        const stream = await getStream(ctx, tenancyOf(req, res), streamId);
        if (stream.status === "error") return { status: 502, body: new StreamLaunchFailed(stream).toBody() };
        return { status: 201, body: streamCreated(stream) };
      },
    }),

    listStreams: listStreamsHandler(ctx),
    getStream: getStreamHandler(ctx),

    // With an Idempotency-Key, the retry of an end whose answer was lost gets that answer, not
    // the 404 a second end of the same stream gets.
    endStream: idempotent(ctx, {
      operation: "endStream",
      requestOf: (req) => ({ stream_id: req.params.id }),
      // An id that is not a UUID is a malformed request, answered 404 without storing it.
      validate: (req) => assertStreamId(req.params.id),
      async run(req, res, onEnded) {
        const stream = await endStream(ctx, tenancyOf(req, res), req.params.id, { onEnded });
        return { status: 200, body: streamEnded(stream) };
      },
      // The attempt ended the stream (its id is recorded in that transaction) and died before
      // storing its answer: the answer is the stream as it ended.
      async resume(req, res, streamId) {
        const stream = await getStream(ctx, tenancyOf(req, res), streamId);
        return { status: 200, body: streamEnded(stream) };
      },
    }),
  };
}
