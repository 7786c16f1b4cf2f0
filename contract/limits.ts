/**
 * The contract's limits and patterns that code needs as values (to clamp, to default, to generate
 * requests at the edges), read from the schemas that state them so nothing restates them by hand.
 */
import type { Json } from "./indexed.ts";
import type { OperationIndex } from "./operations.ts";

export interface ContractLimits {
  /** GET /streams `limit`: its default, and the range the page size applied is clamped to (StreamList `limit`). */
  readonly pageSize: { readonly min: number; readonly max: number; readonly default: number };
  /** GET /streams `offset`: its default and the least offset applied (StreamList `offset`). */
  readonly offset: { readonly min: number; readonly default: number };
  /** POST /streams `duration_minutes`: the planned length's range. */
  readonly durationMinutes: { readonly min: number; readonly max: number };
  /** GET /analytics `period`: the values and the default. */
  readonly periods: { readonly values: readonly string[]; readonly default: string };
  /** The shape of an API key (`svc_live_…`/`svc_test_…`), as the operator API's key creation answers it. */
  readonly apiKeyPattern: RegExp;
}

/** `value`, or a message naming where in the contract it was expected. */
function stated<T>(value: T | undefined, where: string): T {
  if (value === undefined || value === null) throw new Error(`the contract no longer states ${where}`);
  return value;
}

function queryParameter(operations: OperationIndex, operationId: string, name: string): Json {
  const parameter = operations.byId(operationId).parameters.find((candidate) => candidate.in === "query" && candidate.name === name);
  return stated(parameter?.schema as Json | undefined, `the query parameter ${name} of ${operationId}`);
}

function jsonSchema(response: Json | undefined, where: string): Json {
  return stated(response?.content?.["application/json"]?.schema as Json | undefined, where);
}

export function readLimits(operations: OperationIndex): ContractLimits {
  const page = jsonSchema(operations.byId("listStreams").responses.get(200), "the 200 body of listStreams").properties ?? {};
  const limit = queryParameter(operations, "listStreams", "limit");
  const offset = queryParameter(operations, "listStreams", "offset");
  const duration = operations.byId("createStream").requestSchema?.properties?.duration_minutes as Json | undefined;
  const period = queryParameter(operations, "getAnalytics", "period");
  const key = jsonSchema(operations.byId("adminCreateKey").responses.get(201), "the 201 body of adminCreateKey").properties?.key as Json | undefined;
  return {
    pageSize: {
      min: stated(page.limit?.minimum, "StreamList limit minimum"),
      max: stated(page.limit?.maximum, "StreamList limit maximum"),
      default: stated(limit.default, "the default of listStreams limit"),
    },
    offset: { min: stated(page.offset?.minimum, "StreamList offset minimum"), default: stated(offset.default, "the default of listStreams offset") },
    durationMinutes: {
      min: stated(duration?.minimum, "StreamCreate duration_minutes minimum"),
      max: stated(duration?.maximum, "StreamCreate duration_minutes maximum"),
    },
    periods: { values: stated(period.enum, "the values of getAnalytics period"), default: stated(period.default, "the default of getAnalytics period") },
    apiKeyPattern: new RegExp(stated(key?.pattern, "the pattern of KeyCreated key")),
  };
}
