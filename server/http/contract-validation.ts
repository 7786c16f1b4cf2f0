import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { Json } from "../../contract/indexed.ts";
import type { ContractOperation } from "../../contract/operations.ts";

/** What a request is validated on: its path parameters, its query (as settled), its headers and body. */
export interface RequestParts {
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

/** One failed check, as the error handler reads it: `/body/creator_id`, the message, `<keyword>.openapi.validation`. */
export interface ValidationItem {
  path: string;
  message: string;
  errorCode: string;
}

/** A request the contract refuses: 400, answered by the error handler (fromValidation). */
export class RequestInvalid extends Error {
  readonly status = 400;
  readonly errors: ValidationItem[];
  constructor(errors: ValidationItem[]) {
    super(errors.map((item) => `${item.path} ${item.message}`).join(", "));
    this.errors = errors;
  }
}

/** An answer the contract does not document: 500, logged, so a drift between the two is seen. */
export class ResponseInvalid extends Error {
  readonly status = 500;
}

/** The numeric formats OpenAPI adds to JSON Schema's (ajv-formats knows the others). */
const OPENAPI_FORMATS = {
  int32: { type: "number", validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n <= 2 ** 31 - 1 },
  int64: { type: "number", validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 63) && n <= 2 ** 63 - 1 },
  float: { type: "number", validate: (n: number) => typeof n === "number" },
  double: { type: "number", validate: (n: number) => typeof n === "number" },
} as const;

function newAjv(options: Options): Ajv2020 {
  // Unknown keywords (`example`, `x-…`) are annotations; the schemas are the contract's, checked by the lint.
  const ajv = new Ajv2020({ strict: false, strictNumbers: true, allErrors: false, validateSchema: false, ...options });
  addFormatsModule.default(ajv, { mode: "fast" });
  for (const [name, format] of Object.entries(OPENAPI_FORMATS)) ajv.addFormat(name, format);
  return ajv;
}

/**
 * Three compilers, made once per process: parameters arrive as text and are coerced to their
 * schema's type (`limit=20` → 20), a body is JSON and is not; both take the schema's defaults.
 * Answers are checked as they are.
 */
let compilers: { parameters: Ajv2020; body: Ajv2020; response: Ajv2020 } | undefined;
function compilersOnce(): NonNullable<typeof compilers> {
  compilers ??= {
    parameters: newAjv({ coerceTypes: true, useDefaults: true }),
    body: newAjv({ useDefaults: true }),
    response: newAjv({}),
  };
  return compilers;
}

function itemsOf(errors: ErrorObject[] | null | undefined): ValidationItem[] {
  return (errors ?? []).map((error) => {
    const params = error.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[] };
    const named = params.missingProperty ?? params.additionalProperty;
    const message =
      error.keyword === "enum" && params.allowedValues
        ? `${error.message}: ${params.allowedValues.join(", ")}`
        : (error.message ?? "is invalid");
    return {
      path: named === undefined ? error.instancePath : `${error.instancePath}/${named}`,
      message,
      errorCode: `${error.keyword}.openapi.validation`,
    };
  });
}

/** `{ type: object, properties, required }` for the parameters of one location; header names in lower case, as Node gives them. */
function parametersSchema(operation: ContractOperation, location: "path" | "query" | "header"): Json {
  const properties: Json = {};
  const required: string[] = [];
  for (const parameter of operation.parameters.filter((p) => p.in === location)) {
    const name = location === "header" ? String(parameter.name).toLowerCase() : String(parameter.name);
    properties[name] = parameter.schema ?? {};
    if (parameter.required === true) required.push(name);
  }
  return { type: "object", properties, required };
}

/**
 * Query arrays as the contract's `style` says, before validation: `form` with `explode: false`
 * is one comma-separated value (`events=a,b`); with `explode` (the default) the name is repeated,
 * and a single value still makes a one-item array.
 */
function splitQueryArrays(operation: ContractOperation, query: Record<string, unknown>): void {
  for (const parameter of operation.parameters) {
    const value = query[String(parameter.name)];
    if (
      parameter.in !== "query" ||
      (parameter.schema as Json | undefined)?.type !== "array" ||
      typeof value !== "string"
    )
      continue;
    query[String(parameter.name)] = parameter.explode === false ? value.split(",") : [value];
  }
}

const INTEGER_TEXT = /^-?\d+$/;
const NUMBER_TEXT = /^-?\d+(\.\d+)?$/;

/**
 * Numeric parameters must be written as plain decimal numbers that a double holds exactly: Ajv's
 * coercion takes `Infinity`, `1e309`, `0x10` and ` 7` as numbers, and `Infinity` (or 400 nines)
 * then passes its `maximum`, so such a value reached SQL as a 500. Checked here, before Ajv, one
 * rule for every operation of the public, dashboard and operator APIs: anything else is a 400
 * (invalid_fields), never a value SQL sees. (GET /streams clamps its own before this, never 400.)
 */
function numbersWrittenPlainly(operation: ContractOperation, parts: RequestParts): ValidationItem[] {
  const problems: ValidationItem[] = [];
  const values: Record<string, Record<string, unknown>> = {
    path: parts.params,
    query: parts.query,
    header: parts.headers,
  };
  for (const parameter of operation.parameters) {
    const type = (parameter.schema as Json | undefined)?.type;
    if (type !== "integer" && type !== "number") continue;
    const name = parameter.in === "header" ? String(parameter.name).toLowerCase() : String(parameter.name);
    const location = { path: "params", query: "query", header: "headers" }[String(parameter.in)];
    const value = values[String(parameter.in)]?.[name];
    if (typeof value !== "string") continue;
    const plain =
      type === "integer"
        ? INTEGER_TEXT.test(value) && Number.isSafeInteger(Number(value))
        : NUMBER_TEXT.test(value) && Number.isFinite(Number(value));
    if (!plain)
      problems.push({
        path: `/${location}/${name}`,
        message:
          type === "integer"
            ? "must be a whole number written in digits, within the documented range"
            : "must be a number written in digits, within the documented range",
        errorCode: "type.openapi.validation",
      });
  }
  return problems;
}

export interface OperationValidation {
  /** Throws RequestInvalid; coerces `parts.params` and `parts.query` and fills in the schemas' defaults, in place. */
  request(parts: RequestParts): void;
  /** Why the answer is not one the contract documents for the status, or null when it is. */
  response(status: number, body: unknown): string | null;
}

/**
 * The validators of one operation, compiled from the contract's (dereferenced) schemas on first
 * use, so a start-up compiles nothing and an operation never called costs nothing.
 */
export function operationValidation(operation: ContractOperation): OperationValidation {
  let parameters: ValidateFunction | undefined;
  let body: ValidateFunction | undefined;
  const responses = new Map<number, ValidateFunction | null>();
  return {
    request(parts) {
      const ajv = compilersOnce();
      parameters ??= ajv.parameters.compile({
        type: "object",
        properties: {
          params: parametersSchema(operation, "path"),
          query: parametersSchema(operation, "query"),
          headers: parametersSchema(operation, "header"),
        },
      });
      body ??= ajv.body.compile({
        type: "object",
        properties: { body: operation.requestSchema ?? {} },
        required: operation.bodyRequired ? ["body"] : [],
      });
      splitQueryArrays(operation, parts.query);
      const unreadable = numbersWrittenPlainly(operation, parts);
      if (unreadable.length > 0) throw new RequestInvalid(unreadable);
      const validParameters = parameters({ params: parts.params, query: parts.query, headers: parts.headers });
      const validBody = operation.requestSchema === null || body({ body: parts.body });
      if (validParameters && validBody) return;
      throw new RequestInvalid([
        ...itemsOf(validParameters ? [] : parameters.errors),
        ...itemsOf(validBody ? [] : body.errors),
      ]);
    },
    response(status, answer) {
      const documented = operation.responses.get(status);
      if (!documented) return `no schema defined for status code '${status}' in the openapi spec`;
      if (!documented.content) return answer === undefined ? null : "response should NOT have a body";
      let validate = responses.get(status);
      if (validate === undefined) {
        const schema = documented.content["application/json"]?.schema;
        validate = schema ? compilersOnce().response.compile(schema) : null;
        responses.set(status, validate);
      }
      if (validate === null) return null;
      if (answer === undefined || answer === null) return "response body required.";
      if (validate(answer)) return null;
      return itemsOf(validate.errors)
        .map((item) => `${item.path || "/"} ${item.message}`)
        .join(", ");
    },
  };
}
