/**
 * openapi.yaml as the suite judges answers by it: the operations of the contract module
 * (contract/), each documented response compiled to a validator by the schema compiler the server
 * checks its own answers with (contract/schemas.ts), so the judge and the server mean the same by
 * "valid". The suite reads the contract file itself rather than a server's copy, so it can judge
 * any implementation.
 */
import { loadContract } from "../contract/contract.ts";
import type { ContractLimits } from "../contract/limits.ts";
import { CONTRACT_FILE } from "../contract/load.ts";
import type { ContractOperation } from "../contract/operations.ts";
import { compileSchema, describeSchemaErrors, type ValidateFunction } from "../contract/schemas.ts";

type Json = Record<string, any>;

export interface DocumentedResponse {
  status: number;
  /** `application/json` (or `text/event-stream`) where a body is documented, null where none is. */
  mediaType: string | null;
  validate: ValidateFunction | null;
  /** Headers the contract marks required, with a validator of their value. */
  headers: Array<{ name: string; validate: ValidateFunction }>;
  /** For error responses: the codes `error.code` may take. */
  codes: string[];
}

/** An operation of the contract's index, with its documented responses compiled. */
export interface Operation extends Omit<ContractOperation, "responses"> {
  responses: Map<number, DocumentedResponse>;
}

export interface Contract {
  /** The dereferenced document: no `$ref` left to follow. */
  doc: Json;
  limits: ContractLimits;
  operations: Operation[];
  publicOperations: Operation[];
  operation(operationId: string): Operation;
  /**
   * The operation a request goes to; `path` is relative to the API or operator base (or, with
   * `dashboard`, the dashboard API's).
   */
  match(method: string, path: string, internal: boolean, dashboard?: boolean): Operation | undefined;
  compile(schema: Json): ValidateFunction;
}

/** The error codes a response schema allows: the enum (or const) at `error.code`. */
function errorCodes(schema: Json | undefined): string[] {
  const code = schema?.properties?.error?.properties?.code as Json | undefined;
  if (!code) return [];
  return code.enum ?? (code.const !== undefined ? [code.const] : []);
}

function documentedResponse(status: number, response: Json, compile: Contract["compile"]): DocumentedResponse {
  const [mediaType, media] = Object.entries<Json>(response.content ?? {})[0] ?? [null, null];
  const headers = Object.entries<Json>(response.headers ?? {})
    .filter(([, header]) => header.required)
    .map(([name, header]) => ({ name: name.toLowerCase(), validate: compile(header.schema) }));
  return {
    status,
    mediaType,
    validate: media?.schema ? compile(media.schema) : null,
    headers,
    codes: status >= 400 ? errorCodes(media?.schema) : [],
  };
}

export async function loadSuiteContract(file: string = CONTRACT_FILE): Promise<Contract> {
  const contract = await loadContract(file);
  const compile = (schema: Json) => compileSchema(schema);

  const operations: Operation[] = contract.operations.all.map((operation) => ({
    ...operation,
    responses: new Map(
      [...operation.responses].map(([status, response]) => [status, documentedResponse(status, response, compile)]),
    ),
  }));

  return {
    doc: contract.dereferenced,
    limits: contract.limits,
    operations,
    publicOperations: operations.filter((op) => !op.admin && !op.dashboard),
    operation(operationId) {
      const found = operations.find((op) => op.operationId === operationId);
      if (!found) throw new Error(`openapi.yaml has no operation ${operationId}`);
      return found;
    },
    match(method, path, internal, dashboard = false) {
      const bare = path.split("?")[0]!;
      return operations.find(
        (op) =>
          op.dashboard === dashboard &&
          (dashboard || op.admin === internal) &&
          op.method === method &&
          op.pathPattern.test(bare),
      );
    },
    compile,
  };
}

export interface ReceivedResponse {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * Everything wrong with a response for its operation: an undocumented status, the wrong media
 * type, a body the schema rejects, a required header absent or invalid. Empty when conformant.
 */
export function responseViolations(op: Operation, response: ReceivedResponse): string[] {
  const documented = op.responses.get(response.status);
  if (!documented) {
    return [
      `status ${response.status} is not documented for ${op.operationId} (documented: ${[...op.responses.keys()].join(", ")})`,
    ];
  }
  const violations: string[] = [];
  for (const header of documented.headers) {
    const value = response.headers.get(header.name);
    if (value === null) violations.push(`required header ${header.name} is absent`);
    else if (!header.validate(value))
      violations.push(`header ${header.name}: ${describeSchemaErrors(header.validate.errors)}`);
  }
  if (!documented.mediaType || !documented.validate) return violations;
  const contentType = response.headers.get("content-type") ?? "";
  if (contentType.split(";")[0]!.trim() !== documented.mediaType) {
    violations.push(`content type "${contentType}" is not the documented ${documented.mediaType}`);
    return violations;
  }
  // A body that is not JSON (an event stream's text) is judged as the string it is.
  if (!/[/+]json$/.test(documented.mediaType)) {
    if (!documented.validate(response.text))
      violations.push(
        `body does not match the ${response.status} schema: ${describeSchemaErrors(documented.validate.errors)}`,
      );
    return violations;
  }
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    return [...violations, `body is not JSON: ${response.text.slice(0, 80)}`];
  }
  if (!documented.validate(body))
    violations.push(
      `body does not match the ${response.status} schema: ${describeSchemaErrors(documented.validate.errors)}`,
    );
  return violations;
}
