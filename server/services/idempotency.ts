import { createHash, randomUUID } from "node:crypto";
import { ApiError } from "../domain/errors.ts";
import type { Queryable } from "../store/database.ts";
import {
  claimIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  type IdempotencyLock,
  type IdempotencyRecord,
  recordIdempotentResource,
  releaseIdempotencyKey,
  saveIdempotentResponse,
} from "../store/idempotency.ts";

/** How long a key's first answer is replayed, counted from its first request. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How long an attempt holds its key before another attempt with the same request may take it
 * over. Longer than any request runs (HTTP_REQUEST_TIMEOUT_MS defaults to 30 s), so a live
 * attempt is never overtaken; short enough that a crashed process does not leave the key in use
 * for long. An attempt that was overtaken all the same cannot create twice (see recordResource).
 */
export const IDEMPOTENCY_LOCK_MS = 60 * 1000;

/** The operations that take an Idempotency-Key. */
export type IdempotentOperationId =
  | "createStream"
  | "createWebhook"
  | "endStream"
  | "retryWebhookDelivery"
  | "recoverWebhookDeliveries";

/** How a request may differ from the key's first one, for the 422 message. */
const REQUEST_DIFFERENCE: Record<IdempotentOperationId, string> = {
  createStream: "another request body",
  createWebhook: "another request body",
  endStream: "another stream",
  retryWebhookDelivery: "another delivery",
  recoverWebhookDeliveries: "another request body",
};

/** An answer as sent and as replayed: a status and a JSON body. */
export interface Answer {
  status: number;
  body: unknown;
}

/**
 * What a claim decided: `replay` the stored answer; `run` the operation under the lock; or
 * `resume` after an attempt that created `resourceId` and never stored its answer (its process
 * died, or its answer could not be written): answer from the resource, create nothing.
 */
export type Claim =
  | { kind: "replay"; answer: Answer }
  | { kind: "run"; lock: IdempotencyLock }
  | { kind: "resume"; lock: IdempotencyLock; resourceId: string };

/** JSON with object keys sorted at every depth, so key order never changes a fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * What "the same request" means: the same operation on the same request, which is the parsed
 * body of a POST and the path's stream id of DELETE /streams/{id}.
 */
export function requestFingerprint(operation: IdempotentOperationId, request: unknown): string {
  return createHash("sha256")
    .update(`${operation}\n${canonicalJson(request)}`)
    .digest("hex");
}

/**
 * Claims `key` for one attempt of `operation` on `request` (see requestFingerprint) by the API
 * key `apiKeyId`. Throws 422
 * idempotency_key_reused when the key was used with another request, 409 idempotency_key_in_use
 * while an earlier attempt with it still runs.
 */
export async function claimIdempotencyKeyFor(
  db: Queryable,
  {
    apiKeyId,
    key,
    operation,
    request,
    now,
  }: { apiKeyId: string; key: string; operation: IdempotentOperationId; request: unknown; now: Date },
): Promise<Claim> {
  const lock: IdempotencyLock = { apiKeyId, key, token: randomUUID() };
  const fingerprint = requestFingerprint(operation, request);
  const record = await claimIdempotencyKey(db, {
    ...lock,
    operation,
    fingerprint,
    now,
    lockedUntil: new Date(now.getTime() + IDEMPOTENCY_LOCK_MS),
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
  });
  return decide(record, lock, operation, fingerprint);
}

/** The claim's outcome for this attempt, from the record the claim returned. */
export function decide(
  record: IdempotencyRecord,
  lock: IdempotencyLock,
  operation: IdempotentOperationId,
  fingerprint: string,
): Claim {
  if (record.lockToken === lock.token)
    return record.resourceId ? { kind: "resume", lock, resourceId: record.resourceId } : { kind: "run", lock };
  if (record.operation !== operation || record.fingerprint !== fingerprint) {
    const other =
      record.operation === operation ? REQUEST_DIFFERENCE[operation] : `another operation (${record.operation})`;
    throw new ApiError(
      "idempotency_key_reused",
      `This Idempotency-Key was already used with ${other} in the last 24 hours; send a new key for a new request.`,
    );
  }
  if (record.responseStatus !== null && record.responseBody !== null) {
    return { kind: "replay", answer: { status: record.responseStatus, body: JSON.parse(record.responseBody) } };
  }
  throw new ApiError(
    "idempotency_key_in_use",
    "A request with this Idempotency-Key is still being processed; retry after a short wait to get its answer.",
  );
}

/**
 * Notes the created resource in the transaction that creates it. If the lock lapsed and another
 * attempt took the key over meanwhile, throws, so the transaction rolls back and the resource is
 * created once, by the attempt that holds the key.
 */
export async function recordResource(tx: Queryable, lock: IdempotencyLock, resourceId: string): Promise<void> {
  if (!(await recordIdempotentResource(tx, lock, resourceId))) {
    throw new ApiError(
      "idempotency_key_in_use",
      "This request took too long and another request with the same Idempotency-Key took over; retry to get its answer.",
    );
  }
}

export function storeAnswer(db: Queryable, lock: IdempotencyLock, answer: Answer): Promise<void> {
  return saveIdempotentResponse(db, lock, answer.status, JSON.stringify(answer.body));
}

export function releaseKey(db: Queryable, lock: IdempotencyLock, now: Date): Promise<void> {
  return releaseIdempotencyKey(db, lock, now);
}

/** The sweeper's part: records past their 24 hours are deleted. */
export function forgetExpiredIdempotencyKeys(db: Queryable, now: Date): Promise<number> {
  return deleteExpiredIdempotencyKeys(db, now);
}
