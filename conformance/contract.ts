/**
 * openapi.yaml as the suite reads it: every operation with its documented responses, each
 * compiled to a validator (ajv, JSON Schema 2020-12, which OpenAPI 3.1 schemas are). The suite
 * reads the contract itself rather than the server's copy, so it can judge any implementation.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import yaml from "js-yaml";

export const CONTRACT_FILE = fileURLToPath(new URL("../openapi.yaml", import.meta.url));

type Json = Record<string, any>;

export interface DocumentedResponse {
  status: number;
  /** `application/json` where a body is documented, null where none is. */
  mediaType: string | null;
  validate: ValidateFunction | null;
  /** Headers the contract marks required, with a validator of their value. */
  headers: Array<{ name: string; validate: ValidateFunction }>;
  /** For error responses: the codes `error.code` may take. */
  codes: string[];
}

export interface Operation {
  operationId: string;
  method: string;
  /** As written in openapi.yaml, e.g. `/streams/{id}`. */
  path: string;
  /** Operator API (`x-internal`), served under /admin/v1 rather than /api/v1. */
  internal: boolean;
  /** `x-required-scope`; null for operations without a key. */
  scope: string | null;
  /** Whether the operation takes the API key (security not emptied). */
  secured: boolean;
  responses: Map<number, DocumentedResponse>;
  /** Request body schema (refs resolvable by `Contract.compile`), if any. */
  requestSchema: Json | null;
  /** `x-field-error-codes`: the code an invalid body field gets instead of invalid_fields. */
  fieldErrorCodes: Record<string, string>;
  parameters: Json[];
}

export interface Contract {
  doc: Json;
  operations: Operation[];
  publicOperations: Operation[];
  operation(operationId: string): Operation;
  /** The operation a request goes to; `path` is relative to the API or operator base. */
  match(method: string, path: string, internal: boolean): Operation | undefined;
  /** Follows a local `$ref` (responses, parameters, schemas). */
  resolve<T = Json>(node: unknown): T;
  compile(schema: Json): ValidateFunction;
}

const METHODS = ["get", "post", "put", "patch", "delete"];
const SCHEMA_BASE = "openapi.yaml";

/** `#/components/…` → `openapi.yaml#/components/…`, so a schema compiled on its own still finds its refs. */
function anchorRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(anchorRefs);
  if (typeof node !== "object" || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, key === "$ref" && typeof value === "string" && value.startsWith("#/") ? SCHEMA_BASE + value : anchorRefs(value)]),
  );
}

function pathPattern(path: string): RegExp {
  const source = path
    .split(/\{[^}]+\}/)
    .map((literal) => literal.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
    .join("[^/]+");
  return new RegExp(`^${source}$`);
}

/** The error codes a response schema allows: the enum (or const) at `error.code`. */
function errorCodes(resolve: Contract["resolve"], schema: Json | undefined): string[] {
  const code = ["error", "code"].reduce<Json | undefined>((at, property) => resolve<Json | undefined>(at?.properties?.[property]), resolve(schema));
  if (!code) return [];
  return code.enum ?? (code.const !== undefined ? [code.const] : []);
}

export function loadContract(file: string = CONTRACT_FILE): Contract {
  const doc = anchorRefs(yaml.load(readFileSync(file, "utf8"))) as Json;
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormatsModule.default(ajv);
  ajv.addSchema({ $id: SCHEMA_BASE, components: { schemas: doc.components.schemas } });

  const resolve = <T>(node: unknown): T => {
    let current = node;
    while (typeof current === "object" && current !== null && typeof (current as Json).$ref === "string") {
      const pointer = ((current as Json).$ref as string).replace(`${SCHEMA_BASE}#/`, "").split("/");
      current = pointer.reduce<unknown>((at, key) => (at as Json)?.[key.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
    }
    return current as T;
  };
  const compile = (schema: Json) => ajv.compile(schema);

  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const responses = new Map<number, DocumentedResponse>();
      for (const [status, raw] of Object.entries<Json>(op.responses)) {
        const response = resolve<Json>(raw);
        const [mediaType, media] = Object.entries<Json>(response.content ?? {})[0] ?? [null, null];
        const headers = Object.entries<Json>(response.headers ?? {})
          .filter(([, header]) => resolve<Json>(header).required)
          .map(([name, header]) => ({ name: name.toLowerCase(), validate: compile(resolve<Json>(header).schema) }));
        responses.set(Number(status), {
          status: Number(status),
          mediaType,
          validate: media?.schema ? compile(media.schema) : null,
          headers,
          codes: Number(status) >= 400 ? errorCodes(resolve, media?.schema) : [],
        });
      }
      operations.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        internal: op["x-internal"] === true || item["x-internal"] === true,
        scope: op["x-required-scope"] ?? null,
        secured: !(Array.isArray(op.security) && op.security.length === 0),
        responses,
        requestSchema: op.requestBody ? (resolve<Json>(op.requestBody).content?.["application/json"]?.schema ?? null) : null,
        fieldErrorCodes: { ...(op["x-field-error-codes"] ?? {}) },
        parameters: [...(item.parameters ?? []), ...(op.parameters ?? [])].map((parameter) => resolve<Json>(parameter)),
      });
    }
  }
  const patterns = new Map(operations.map((op) => [op, pathPattern(op.path)]));

  return {
    doc,
    operations,
    publicOperations: operations.filter((op) => !op.internal),
    operation(operationId) {
      const found = operations.find((op) => op.operationId === operationId);
      if (!found) throw new Error(`openapi.yaml has no operation ${operationId}`);
      return found;
    },
    match(method, path, internal) {
      const bare = path.split("?")[0]!;
      return operations.find((op) => op.internal === internal && op.method === method && patterns.get(op)!.test(bare));
    },
    resolve,
    compile,
  };
}

/** `events/0: must be equal to one of the allowed values` */
export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((error) => {
      const extra = error.keyword === "additionalProperties" ? ` (${(error.params as Json).additionalProperty})` : "";
      return `${error.instancePath || "(body)"}: ${error.message}${extra}`;
    })
    .join("; ");
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
    return [`status ${response.status} is not documented for ${op.operationId} (documented: ${[...op.responses.keys()].join(", ")})`];
  }
  const violations: string[] = [];
  for (const header of documented.headers) {
    const value = response.headers.get(header.name);
    if (value === null) violations.push(`required header ${header.name} is absent`);
    else if (!header.validate(value)) violations.push(`header ${header.name}: ${describeErrors(header.validate.errors)}`);
  }
  if (!documented.mediaType || !documented.validate) return violations;
  const contentType = response.headers.get("content-type") ?? "";
  if (contentType.split(";")[0]!.trim() !== documented.mediaType) {
    violations.push(`content type "${contentType}" is not the documented ${documented.mediaType}`);
    return violations;
  }
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    return [...violations, `body is not JSON: ${response.text.slice(0, 80)}`];
  }
  if (!documented.validate(body)) violations.push(`body does not match the ${response.status} schema: ${describeErrors(documented.validate.errors)}`);
  return violations;
}
