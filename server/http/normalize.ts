import type { NextFunction, Request, RequestHandler, Response } from "express";
import { atMostCharacters } from "../domain/text.ts";
import { ApiError } from "../domain/errors.ts";
import type { ContractLimits } from "../../contract/limits.ts";
import { ADMIN_BASE, API_BASE, type ContractOperation, DASHBOARD_API_BASE } from "../../contract/operations.ts";
import type { ListQuery } from "../services/streams.ts";
import { callerOf } from "./guard.ts";
import { settleQuery } from "./validator.ts";

/**
 * What every request goes through first, on the server and on the mock alike (one middleware, not
 * several: every layer costs each request a little, see docs/performance.md).
 * - HEAD is answered as GET without a body (Node drops it: the response was created for a HEAD),
 *   so it goes through the same guard, validation and headers (Cache-Control on /creators).
 * - `/api/v1` and `/api/v1/` are the same discovery document (the operation index matches both).
 * - Any other API or operator API path ending in a slash names nothing: `GET /api/v1/streams/` is 404, never the
 *   list. Generated clients and the mock read it as `/streams/{id}` with an empty id, so
 *   answering the list would make the server and every other reading of the contract disagree.
 */
export function normalizeRequest(req: Request, res: Response, next: NextFunction): void {
  if (req.method === "HEAD") {
    req.method = "GET";
    // What an answer held open (an event stream) needs to know: a HEAD ends at its headers.
    res.locals.head = true;
  }
  const url = req.url;
  const base = [API_BASE, ADMIN_BASE, DASHBOARD_API_BASE].find((prefix) => url.startsWith(`${prefix}/`));
  if (base && req.path.length > base.length + 1 && req.path.endsWith("/")) {
    return next(
      new ApiError(
        "not_found",
        `No such endpoint: ${req.path}. Paths take no trailing slash: ${req.path.replace(/\/+$/, "")}.`,
      ),
    );
  }
  next();
}

function firstValue(value: unknown): string | undefined {
  return Array.isArray(value) ? firstValue(value[0]) : typeof value === "string" ? value : undefined;
}

function clampedInteger(raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || !/^[+-]?\d+$/.test(raw.trim())) return fallback;
  return Math.min(max, Math.max(min, Number(raw.trim())));
}

/** The query clampListQuery settled for this request. */
export function listQueryOf(res: Response): ListQuery {
  const query = res.locals.listQuery;
  if (!query) throw new Error("listQueryOf: clampListQuery did not run for this request");
  return query;
}

/**
 * GET /streams never answers 400: out-of-range `limit`/`offset` are clamped, unparsable ones
 * defaulted, before validation, to the contract's bounds and defaults. A `status` longer than the
 * contract's maxLength is cut to it: longer than any status, it matches nothing either way. The
 * settled query is what validation sees (settleQuery), and is kept for the handler (listQueryOf)
 * and the mock, which so parse no query string themselves.
 */
export function clampListQuery({
  pageSize,
  offset,
  statusFilterMaxLength,
}: Pick<ContractLimits, "pageSize" | "offset" | "statusFilterMaxLength">): RequestHandler {
  return function clampList(req, res, next) {
    const raw = req.query as Record<string, unknown>;
    const sentStatus = firstValue(raw.status);
    const status = sentStatus === undefined ? undefined : atMostCharacters(sentStatus, statusFilterMaxLength);
    const query: ListQuery = {
      status: status ?? null,
      limit: clampedInteger(firstValue(raw.limit), pageSize.default, pageSize.min, pageSize.max),
      offset: clampedInteger(firstValue(raw.offset), offset.default, offset.min, offset.max),
    };
    res.locals.listQuery = query;
    // The parameters sent, with their settled values; absent ones stay absent and take the
    // contract's defaults, in validation and in listQueryOf alike.
    const settled: Record<string, unknown> = {};
    if (raw.limit !== undefined) settled.limit = String(query.limit);
    if (raw.offset !== undefined) settled.offset = String(query.offset);
    if (status !== undefined) settled.status = status;
    settleQuery(res, settled);
    next();
  };
}

/**
 * GET /webhooks/deliveries pages as GET /streams does: a `limit` or `offset` out of range is
 * clamped to the contract's bounds, an unparsable one left to its default, never a 400. The other
 * parameters are validated as sent (their first value, as every rule here reads them).
 */
export function clampPaging({ pageSize, offset }: Pick<ContractLimits, "pageSize" | "offset">): RequestHandler {
  return function clampPage(req, res, next) {
    const settled: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(req.query as Record<string, unknown>)) {
      const first = firstValue(value);
      if (first === undefined) continue;
      if (name === "limit" || name === "offset") {
        const bounds = name === "limit" ? pageSize : offset;
        if (/^[+-]?\d+$/.test(first.trim())) settled[name] = String(clampedInteger(first, 0, bounds.min, bounds.max));
      } else settled[name] = first;
    }
    settleQuery(res, settled);
    next();
  };
}

/**
 * A list paged by cursor (GET /requests) never answers 400 for its `limit`: out of range it is
 * clamped, unparsable it takes the default, to the bounds the operation's own `limit` parameter
 * states in the contract. Every other parameter is validated as sent.
 */
export function clampLimit(operation: ContractOperation): RequestHandler {
  const limit = operation.parameters.find((parameter) => parameter.in === "query" && parameter.name === "limit");
  const bounds = (limit?.schema ?? {}) as { minimum?: number; maximum?: number; default?: number };
  const { minimum, maximum, default: fallback } = bounds;
  if (minimum === undefined || maximum === undefined || fallback === undefined)
    throw new Error(`${operation.operationId}: its limit parameter must state minimum, maximum and default`);
  return function clampPageLimit(req, res, next) {
    const raw = req.query as Record<string, unknown>;
    if (raw.limit === undefined) return next();
    settleQuery(res, { ...raw, limit: String(clampedInteger(firstValue(raw.limit), fallback, minimum, maximum)) });
    next();
  };
}

/**
 * DELETE /webhooks documents one 400 only, `missing_fields` for an absent id: a repeated
 * `id` (`?id=a&id=b`, `?id[]=a`) uses its first value, as GET /streams does with its parameters,
 * and an id longer than the contract's maxLength is cut to it, ending in "…": it names no webhook
 * (ids are UUIDs) and is deleted idempotently, as before, never refused.
 */
export function firstWebhookId({ webhookIdMaxLength }: Pick<ContractLimits, "webhookIdMaxLength">): RequestHandler {
  return function firstId(req, res, next) {
    const sent = firstValue((req.query as Record<string, unknown>).id);
    const id = sent === undefined ? undefined : atMostCharacters(sent, webhookIdMaxLength);
    settleQuery(res, id === undefined ? {} : { id });
    next();
  };
}

/**
 * A live-key start without `duration_minutes` is `missing_fields`, checked before the body's
 * constraints so missing fields are reported before invalid ones.
 */
export const requireLiveDuration: RequestHandler = (req, res, next) => liveDurationRule(callerOf(res).mode, req, next);

/** The same rule for a stream started in the dashboard, whose mode is in its path (`/modes/live/streams`). */
export const requireDashboardLiveDuration: RequestHandler = (req, _res, next) =>
  liveDurationRule(req.path.includes("/modes/live/") ? "live" : "test", req, next);

function liveDurationRule(mode: string, req: Request, next: NextFunction): void {
  const body = req.body as Record<string, unknown> | undefined;
  const isObject = typeof body === "object" && body !== null && !Array.isArray(body);
  if (isObject && mode === "live" && body.duration_minutes === undefined) {
    return next(new ApiError("missing_fields", "Missing required field: duration_minutes (required with live keys)."));
  }
  next();
}
