import type { Response } from "express";
import { ApiError } from "../domain/errors.ts";
import type { OnCreated, ServiceContext } from "../services/context.ts";
import {
  type Answer,
  claimIdempotencyKeyFor,
  type IdempotentOperationId,
  recordResource,
  releaseKey,
  storeAnswer,
} from "../services/idempotency.ts";
import type { OperationHandler, OperationRequest } from "./dispatch.ts";
import { callerOf } from "./guard.ts";

export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";

export interface IdempotentOperation<Id extends IdempotentOperationId> {
  operation: Id;
  /** What the key stands for besides the operation (see requestFingerprint); the parsed body by default. */
  requestOf?(req: OperationRequest<Id>): unknown;
  /** Refusals made before the key is looked at, like request validation's: nothing is stored for them. */
  validate?(req: OperationRequest<Id>): void;
  /** Runs the operation; `onCreated` must run in the transaction that creates (or ends) its resource. */
  run(req: OperationRequest<Id>, res: Response, onCreated?: OnCreated): Promise<Answer>;
  /** The answer for the resource an earlier attempt created and never answered for. */
  resume(req: OperationRequest<Id>, res: Response, resourceId: string): Promise<Answer>;
}

/**
 * The failure as an answer, when it is one: the endpoint's own refusals (4xx) and 502
 * launch_failed are what the request did and are kept for replay; 500 db_error and anything
 * unexpected are not (undefined), so a retry runs again.
 */
function answerOfFailure(error: unknown): ApiError | undefined {
  if (error instanceof ApiError && (error.status < 500 || error.code === "launch_failed")) return error;
  return undefined;
}

async function answerOf(run: () => Promise<Answer>): Promise<Answer> {
  try {
    return await run();
  } catch (error) {
    const answer = answerOfFailure(error);
    if (answer) return { status: answer.status, body: answer.toBody() };
    throw error;
  }
}

/**
 * The handler of an operation that honours `Idempotency-Key` (README: Idempotency): POST /streams,
 * POST /webhooks and DELETE /streams/{id}. It runs after the
 * guard and validation, so a request they refuse stores nothing. Without the header the operation
 * runs as it always has. With it: the key is claimed for the caller's API key (409 while another
 * attempt holds it, 422 if it was used with another request); a stored answer is replayed with
 * `Idempotent-Replayed: true`; otherwise the operation runs, its resource is recorded in its own
 * transaction and its answer stored. A 500 stores nothing: the key is released (or, when the
 * resource was created all the same, unlocked so that a retry answers from it).
 */
export function idempotent<Id extends IdempotentOperationId>(
  ctx: Pick<ServiceContext, "db" | "clock">,
  operation: IdempotentOperation<Id>,
): OperationHandler<Id> {
  return async function idempotentOperation(req, res) {
    operation.validate?.(req);
    const key = req.get(IDEMPOTENCY_KEY_HEADER);
    if (key === undefined) {
      const answer = await operation.run(req, res);
      res.status(answer.status).json(answer.body);
      return;
    }
    const request = operation.requestOf ? operation.requestOf(req) : req.body;
    const claim = await claimIdempotencyKeyFor(ctx.db, {
      apiKeyId: callerOf(res).keyId,
      key,
      operation: operation.operation,
      request,
      now: ctx.clock(),
    });
    if (claim.kind === "replay") {
      res.set(REPLAYED_HEADER, "true");
      res.status(claim.answer.status).json(claim.answer.body);
      return;
    }
    const { lock } = claim;
    let answer: Answer;
    try {
      answer = await answerOf(() =>
        claim.kind === "resume"
          ? operation.resume(req, res, claim.resourceId)
          : operation.run(req, res, (tx, resourceId) => recordResource(tx, lock, resourceId)),
      );
    } catch (error) {
      await releaseKey(ctx.db, lock, ctx.clock()).catch(() => undefined);
      throw error;
    }
    // The answer stands even if it cannot be stored (the database failing just now): the lock
    // then lapses and a retry answers from the resource recorded with it.
    await storeAnswer(ctx.db, lock, answer).catch(() => undefined);
    res.status(answer.status).json(answer.body);
  };
}
