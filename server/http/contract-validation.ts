import type { Json } from "../../contract/indexed.ts";
import type { ContractOperation } from "../../contract/operations.ts";
import {
  compileSchema,
  describeSchemaErrors,
  type ErrorObject,
  type ValidateFunction,
} from "../../contract/schemas.ts";

/** What a request is validated on: its path parameters, its query (as settled), its headers and body. */
export interface RequestParts {
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

/**
 * A request the contract refuses: 400, answered by the error handler (fromValidation), which
 * reads Ajv's failures. Their `instancePath` starts with where the value was: `/params`,
 * `/query`, `/headers` or `/body` (`/body/creator_id`).
 */
export class RequestInvalid extends Error {
  override name = "RequestInvalid";
  readonly errors: ErrorObject[];
  constructor(errors: ErrorObject[]) {
    super(describeSchemaErrors(errors));
    this.errors = errors;
  }
}

/**
 * An answer the contract does not document (whole, or an item of a streamed one): a bug of the
 * server, answered 500 and logged, never sent, so a drift between the two is seen.
 */
export class ResponseInvalid extends Error {
  override name = "ResponseInvalid";
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
    if (parameter.in !== "query" || parameter.schema?.type !== "array" || typeof value !== "string") continue;
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
function numbersWrittenPlainly(operation: ContractOperation, parts: RequestParts): ErrorObject[] {
  const problems: ErrorObject[] = [];
  const values: Record<string, Record<string, unknown>> = {
    path: parts.params,
    query: parts.query,
    header: parts.headers,
  };
  for (const parameter of operation.parameters) {
    const type = parameter.schema?.type;
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
        instancePath: `/${location}/${name}`,
        schemaPath: "#/numbers-written-plainly",
        keyword: "type",
        params: { type },
        message:
          type === "integer"
            ? "must be a whole number written in digits, within the documented range"
            : "must be a number written in digits, within the documented range",
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
      parameters ??= compileSchema(
        {
          type: "object",
          properties: {
            params: parametersSchema(operation, "path"),
            query: parametersSchema(operation, "query"),
            headers: parametersSchema(operation, "header"),
          },
        },
        "parameters",
      );
      body ??= compileSchema(
        {
          type: "object",
          properties: { body: operation.requestSchema ?? {} },
          required: operation.bodyRequired ? ["body"] : [],
        },
        "body",
      );
      splitQueryArrays(operation, parts.query);
      const unreadable = numbersWrittenPlainly(operation, parts);
      if (unreadable.length > 0) throw new RequestInvalid(unreadable);
      const validParameters = parameters({ params: parts.params, query: parts.query, headers: parts.headers });
      const validBody = operation.requestSchema === null || body({ body: parts.body });
      if (validParameters && validBody) return;
      throw new RequestInvalid([
        ...(validParameters ? [] : (parameters.errors ?? [])),
        ...(validBody ? [] : (body.errors ?? [])),
      ]);
    },
    response(status, answer) {
      const documented = operation.responses.get(status);
      if (!documented) return `${status} is not a status the contract documents`;
      if (!documented.content) return answer === undefined ? null : "the contract documents no body for this status";
      let validate = responses.get(status);
      if (validate === undefined) {
        const schema = documented.content["application/json"]?.schema;
        validate = schema ? compileSchema(schema) : null;
        responses.set(status, validate);
      }
      if (validate === null) return null;
      if (answer === undefined || answer === null) return "the contract documents a body for this status";
      if (validate(answer)) return null;
      return describeSchemaErrors(validate.errors);
    },
  };
}
