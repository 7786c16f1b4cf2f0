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

/**
 * An answer the contract does not document (whole, or an item of a streamed one): a bug of the
 * server, answered 500 and logged, never sent, so a drift between the two is seen.
 */
export class ResponseInvalid extends Error {
  override name = "ResponseInvalid";
  readonly status = 500;
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
        validate = schema ? compileSchema(schema) : null;
        responses.set(status, validate);
      }
      if (validate === null) return null;
      if (answer === undefined || answer === null) return "response body required.";
      if (validate(answer)) return null;
      return describeSchemaErrors(validate.errors);
    },
  };
}
