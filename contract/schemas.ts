/**
 * The one schema compiler: every JSON Schema of the contract that anything is checked against
 * (the server's requests, its answers whole or streamed item by item, and the conformance
 * suite's judge) is compiled here, with one Ajv configuration, so "valid" has one meaning:
 *
 * - JSON Schema 2020-12 (what OpenAPI 3.1 schemas are), unknown keywords (`example`, `x-…`)
 *   taken as annotations; the schemas themselves are checked by the contract's lint;
 * - every format in ajv-formats' full mode (a `date-time` is a real calendar date:
 *   `2026-02-31T00:00:00Z` is refused), and OpenAPI's `int32`/`int64` bounds (2^70 is refused),
 *   except `uri`, which keeps the fast mode's lenient check (see LENIENT_URI);
 * - the first failure stops a check (a hostile input costs one failure, not a list of them).
 *
 * What differs is only what the input is: `parameters` arrive as text and are coerced to their
 * schema's type (`limit=20` → 20) and given their defaults; a `body` is JSON, given its defaults;
 * a `value` (an answer, or anything a judge reads) is checked as it is, never changed.
 * Compiled schemas are kept by Ajv (by schema object), so a schema is compiled once per process.
 */
import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { fastFormats } from "ajv-formats/dist/formats.js";
import type { Json } from "./indexed.ts";

export type { ErrorObject, ValidateFunction };

export type SchemaInput = "parameters" | "body" | "value";

/** The numeric formats OpenAPI adds to JSON Schema's (ajv-formats knows the others). */
const OPENAPI_FORMATS = {
  int32: { type: "number", validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n <= 2 ** 31 - 1 },
  int64: { type: "number", validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 63) && n <= 2 ** 63 - 1 },
  float: { type: "number", validate: (n: number) => typeof n === "number" },
  double: { type: "number", validate: (n: number) => typeof n === "number" },
} as const;

/**
 * `uri` as releases up to 1.3.0 checked it (a scheme, then no white space). The full mode's strict
 * RFC 3986 check refuses `https://h.example/a|b`, `/ü`, `/a{b}` or `/%zz`: webhooks stored under
 * 1.3.0 with such URLs would turn `GET /webhooks` into a 500, and registering them would become a
 * 400 — a breaking change. The server's own URL check (`invalid_url`) still guards what is stored.
 */
const LENIENT_URI = fastFormats.uri;

const INPUT_OPTIONS: Record<SchemaInput, Options> = {
  parameters: { coerceTypes: true, useDefaults: true },
  body: { useDefaults: true },
  value: {},
};

function newAjv(input: SchemaInput): Ajv2020 {
  const ajv = new Ajv2020({
    strict: false,
    strictNumbers: true,
    allErrors: false,
    validateSchema: false,
    ...INPUT_OPTIONS[input],
  });
  addFormatsModule.default(ajv, { mode: "full" });
  if (LENIENT_URI) ajv.addFormat("uri", LENIENT_URI);
  for (const [name, format] of Object.entries(OPENAPI_FORMATS)) ajv.addFormat(name, format);
  return ajv;
}

const compilers = new Map<SchemaInput, Ajv2020>();

/** `schema` compiled for `input` (see SchemaInput); the same schema object is compiled once. */
export function compileSchema(schema: Json, input: SchemaInput = "value"): ValidateFunction {
  let ajv = compilers.get(input);
  if (!ajv) {
    ajv = newAjv(input);
    compilers.set(input, ajv);
  }
  return ajv.compile(schema);
}

/** `/started_at must match format "date-time"`: the failures of one check, for a log line or a report. */
export function describeSchemaErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((error) => {
      const extra = error.keyword === "additionalProperties" ? ` (${error.params.additionalProperty})` : "";
      return `${error.instancePath || "/"} ${error.message ?? "is invalid"}${extra}`;
    })
    .join("; ");
}
