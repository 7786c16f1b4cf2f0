/**
 * The rules of single operations that run before validation, for what their schemas cannot state:
 * list parameters clamped rather than refused, a repeated id read for its first value, a live
 * start's duration required. Each is a typed field of its operation's route (operation-routes.ts),
 * run by validation (validator.ts), on the server and the mock alike.
 */
import type { Response } from "express";
import type { Contract } from "../../contract/contract.ts";
import type { ContractLimits } from "../../contract/limits.ts";
import type { ContractOperation } from "../../contract/operations.ts";
import { atMostCharacters } from "../domain/text.ts";
import { ApiError } from "../domain/errors.ts";
import type { ServedOperationId } from "./dispatch.ts";
import { callerOf } from "./guard.ts";

/** A query as Express parsed it from the URL: text, or arrays and objects for repeated or bracketed names. */
export type SentQuery = Readonly<Record<string, unknown>>;

/** A request as a rule sees it: its operation found and its body read, nothing validated yet. */
export interface UnvalidatedRequest {
  readonly body: unknown;
  /** The path parameters as sent (decoded). */
  readonly params: Readonly<Record<string, string>>;
}

/**
 * The query validation judges and the handler then gets as `req.query`, from the one sent: a
 * parameter settled here is never a 400.
 */
type SettleQuery = (sent: SentQuery) => Record<string, unknown>;

export interface OperationRule {
  readonly settleQuery?: SettleQuery;
  /** Throws a refusal the schemas cannot state, reported before the body's own constraints. */
  readonly checkBody?: (request: UnvalidatedRequest, res: Response) => void;
}

/** The operations with a rule, by operationId: an id the contract's types do not name fails to compile. */
export type OperationRules = { readonly [Id in ServedOperationId]?: OperationRule };

export function operationRules({ limits, operations }: Contract): OperationRules {
  const listQuery = clampListQuery(limits);
  return {
    listStreams: { settleQuery: listQuery },
    dashboardListStreams: { settleQuery: listQuery },
    createStream: { checkBody: ({ body }, res) => requireLiveDuration(body, callerOf(res).mode) },
    // A stream started in the dashboard has its mode in its path (`/modes/live/streams`).
    dashboardCreateStream: { checkBody: ({ body, params }) => requireLiveDuration(body, params.mode) },
    deleteWebhook: { settleQuery: firstWebhookId(limits) },
    listRequests: { settleQuery: requestLogQuery(operations.byId("listRequests")) },
    dashboardListRequests: { settleQuery: requestLogQuery(operations.byId("dashboardListRequests")) },
    listWebhookDeliveries: { settleQuery: clampPaging(limits) },
  };
}

function firstValue(value: unknown): string | undefined {
  return Array.isArray(value) ? firstValue(value[0]) : typeof value === "string" ? value : undefined;
}

function clampedInteger(raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || !/^[+-]?\d+$/.test(raw.trim())) return fallback;
  return Math.min(max, Math.max(min, Number(raw.trim())));
}

/**
 * GET /streams never answers 400: out-of-range `limit`/`offset` are clamped, unparsable ones
 * defaulted, before validation, to the contract's bounds and defaults. A `status` longer than the
 * contract's maxLength is cut to it: longer than any status, it matches nothing either way. The
 * parameters sent, with their settled values; absent ones stay absent and take the contract's
 * defaults in validation. The mock and the handler both read the validated query.
 */
function clampListQuery({
  pageSize,
  offset,
  statusFilterMaxLength,
}: Pick<ContractLimits, "pageSize" | "offset" | "statusFilterMaxLength">): SettleQuery {
  return (sent) => {
    const settled: Record<string, unknown> = {};
    const status = firstValue(sent.status);
    if (sent.limit !== undefined)
      settled.limit = String(clampedInteger(firstValue(sent.limit), pageSize.default, pageSize.min, pageSize.max));
    if (sent.offset !== undefined)
      settled.offset = String(clampedInteger(firstValue(sent.offset), offset.default, offset.min, offset.max));
    if (status !== undefined) settled.status = atMostCharacters(status, statusFilterMaxLength);
    return settled;
  };
}

/**
 * GET /webhooks/deliveries pages as GET /streams does: a `limit` or `offset` out of range is
 * clamped to the contract's bounds, an unparsable one left to its default, never a 400. The other
 * parameters are validated as sent (their first value, as every rule here reads them).
 */
function clampPaging({ pageSize, offset }: Pick<ContractLimits, "pageSize" | "offset">): SettleQuery {
  return (sent) => {
    const settled: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(sent)) {
      const first = firstValue(value);
      if (first === undefined) continue;
      if (name === "limit" || name === "offset") {
        const bounds = name === "limit" ? pageSize : offset;
        if (/^[+-]?\d+$/.test(first.trim())) settled[name] = String(clampedInteger(first, 0, bounds.min, bounds.max));
      } else settled[name] = first;
    }
    return settled;
  };
}

/**
 * A list paged by cursor (GET /requests) never answers 400 for its `limit`: out of range it is
 * clamped, unparsable it takes the default, to the bounds the operation's own `limit` parameter
 * states in the contract. Every other parameter is validated as sent.
 */
function clampLimit(operation: ContractOperation): SettleQuery {
  const limit = operation.parameters.find((parameter) => parameter.in === "query" && parameter.name === "limit");
  const { minimum, maximum, default: fallback } = limit?.schema ?? {};
  if (typeof minimum !== "number" || typeof maximum !== "number" || typeof fallback !== "number")
    throw new Error(`${operation.operationId}: its limit parameter must state minimum, maximum and default`);
  return (sent) =>
    sent.limit === undefined
      ? { ...sent }
      : { ...sent, limit: String(clampedInteger(firstValue(sent.limit), fallback, minimum, maximum)) };
}

/** A time with an offset whose `+` came through as a space: `+` unencoded in a query is a space. */
const OFFSET_SIGN_LOST = /^(\d{4}-\d{2}-\d{2}T[\d:.]+) (\d{2}:\d{2})$/;

/**
 * The request log's query: its limit clamped, and a `since` sent with an unencoded `+` before its
 * offset (`since=2026-11-20T14:00:00+01:00`, as curl and Postman's collection send it) read as
 * meant rather than refused.
 */
function requestLogQuery(operation: ContractOperation): SettleQuery {
  const clamp = clampLimit(operation);
  return (sent) => {
    const settled = clamp(sent);
    if (typeof settled.since === "string") settled.since = settled.since.replace(OFFSET_SIGN_LOST, "$1+$2");
    return settled;
  };
}

/**
 * DELETE /webhooks documents one 400 only, `missing_fields` for an absent id: a repeated
 * `id` (`?id=a&id=b`, `?id[]=a`) uses its first value, as GET /streams does with its parameters,
 * and an id longer than the contract's maxLength is cut to it, ending in "…": it names no webhook
 * (ids are UUIDs) and is deleted idempotently, as before, never refused.
 */
function firstWebhookId({ webhookIdMaxLength }: Pick<ContractLimits, "webhookIdMaxLength">): SettleQuery {
  return (sent) => {
    const id = firstValue(sent.id);
    return id === undefined ? {} : { id: atMostCharacters(id, webhookIdMaxLength) };
  };
}

/**
 * A live start without `duration_minutes` is `missing_fields`, checked before the body's
 * constraints so missing fields are reported before invalid ones.
 */
function requireLiveDuration(body: unknown, mode: string | undefined): void {
  const isObject = typeof body === "object" && body !== null && !Array.isArray(body);
  if (isObject && mode === "live" && (!("duration_minutes" in body) || body.duration_minutes === undefined))
    throw new ApiError("missing_fields", "Missing required field: duration_minutes (required with live keys).");
}
