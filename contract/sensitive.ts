/**
 * Where an operation's JSON bodies carry secrets: every property the contract marks
 * `x-sensitive: true` (a webhook's signing secret, a viewer token, a new API key, a password…),
 * found once per operation by walking its request and response schemas, and how to blank them out
 * of a body. The request log (server/observability/request-log.ts) stores bodies only through
 * `redactBody`, so a secret the contract names is never written to it.
 */
import type { Json } from "./indexed.ts";
import type { ContractOperation } from "./operations.ts";

/** What a sensitive value is stored as. */
export const REDACTED = "[redacted]";

/** Where the sensitive properties of one schema are: the value itself, or some of its parts. */
export interface SensitivePaths {
  /** The whole value is sensitive. */
  readonly redact?: true;
  /** Sensitive parts under these properties. */
  readonly properties?: ReadonlyMap<string, SensitivePaths>;
  /** Sensitive parts under every other property of an object (`additionalProperties`). */
  readonly additional?: SensitivePaths;
  /** Sensitive parts under every item of an array. */
  readonly items?: SensitivePaths;
}

interface Building {
  redact?: true;
  properties?: Map<string, SensitivePaths>;
  additional?: SensitivePaths;
  items?: SensitivePaths;
}

function merge(into: Building, from: SensitivePaths): void {
  if (from.redact) into.redact = true;
  for (const [name, paths] of from.properties ?? []) {
    into.properties ??= new Map();
    const known = into.properties.get(name);
    into.properties.set(name, known ? mergedCopy(known, paths) : paths);
  }
  if (from.additional)
    into.additional = into.additional ? mergedCopy(into.additional, from.additional) : from.additional;
  if (from.items) into.items = into.items ? mergedCopy(into.items, from.items) : from.items;
}

function mergedCopy(a: SensitivePaths, b: SensitivePaths): SensitivePaths {
  const copy: Building = {};
  merge(copy, a);
  merge(copy, b);
  return copy;
}

/**
 * The sensitive paths of a dereferenced schema, or null when it has none. Follows `properties`,
 * `additionalProperties`, `items`, `prefixItems` (as items) and the branches of `allOf`, `anyOf`
 * and `oneOf` (a property sensitive in any branch is treated as sensitive). A schema reached again
 * along its own path (a recursive one) is not walked twice.
 */
export function sensitivePaths(schema: Json | null | undefined, walking = new Set<Json>()): SensitivePaths | null {
  if (typeof schema !== "object" || schema === null || walking.has(schema)) return null;
  if (schema["x-sensitive"] === true) return { redact: true };
  walking.add(schema);
  const found: Building = {};
  for (const [name, property] of Object.entries<Json>(schema.properties ?? {})) {
    const paths = sensitivePaths(property, walking);
    if (paths) merge(found, { properties: new Map([[name, paths]]) });
  }
  if (typeof schema.additionalProperties === "object") {
    const paths = sensitivePaths(schema.additionalProperties, walking);
    if (paths) merge(found, { additional: paths });
  }
  const itemSchemas: Json[] = [
    ...(typeof schema.items === "object" && schema.items !== null ? [schema.items] : []),
    ...(Array.isArray(schema.prefixItems) ? schema.prefixItems : []),
  ];
  for (const item of itemSchemas) {
    const paths = sensitivePaths(item, walking);
    if (paths) merge(found, { items: paths });
  }
  for (const branch of [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    const paths = sensitivePaths(branch, walking);
    if (paths) merge(found, paths);
  }
  walking.delete(schema);
  return found.redact || found.properties || found.additional || found.items ? found : null;
}

/** One operation's sensitive paths: of its request body, and of its JSON answer by status. */
export interface OperationSecrets {
  readonly request: SensitivePaths | null;
  /** Statuses absent here carry nothing sensitive. */
  readonly responses: ReadonlyMap<number, SensitivePaths>;
}

const NONE: OperationSecrets = { request: null, responses: new Map() };

/** The sensitive paths of one operation's bodies. */
export function operationSecrets(operation: ContractOperation): OperationSecrets {
  const request = sensitivePaths(operation.requestSchema);
  const responses = new Map<number, SensitivePaths>();
  for (const [status, response] of operation.responses) {
    const paths = sensitivePaths(response?.content?.["application/json"]?.schema);
    if (paths) responses.set(status, paths);
  }
  return request === null && responses.size === 0 ? NONE : { request, responses };
}

/**
 * The sensitive paths of every operation, compiled once (at start-up): a request then only looks
 * its operation up.
 */
export function contractSecrets(operations: readonly ContractOperation[]): ReadonlyMap<string, OperationSecrets> {
  return new Map(operations.map((operation) => [operation.operationId, operationSecrets(operation)]));
}

/**
 * `value` with every sensitive part replaced by REDACTED, copied where it changes (the value given
 * is never modified). A sensitive value that is null or absent stays so: it carried nothing.
 */
export function redactBody(value: unknown, paths: SensitivePaths | null): unknown {
  if (paths === null || value === null || value === undefined) return value;
  if (paths.redact) return REDACTED;
  if (Array.isArray(value)) return paths.items ? value.map((item) => redactBody(item, paths.items!)) : value;
  if (typeof value !== "object") return value;
  const { properties, additional } = paths;
  let copy: Record<string, unknown> | undefined;
  for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
    // `additional` is applied to every property it may cover: redacting too much, never too little.
    const under = properties?.get(name) ?? additional;
    if (!under) continue;
    const redacted = redactBody(item, under);
    if (redacted === item) continue;
    copy ??= { ...(value as Record<string, unknown>) };
    copy[name] = redacted;
  }
  return copy ?? value;
}

/**
 * Text that looks like an API key (`svc_live_…`, `svc_test_…`) or a webhook signing secret
 * (`whsec_…`) followed by at least 8 of its characters: a key hint (`svc_test_…abcd`) is not one.
 */
const SECRET_LIKE = /svc_(?:live|test)_[0-9A-Za-z]{8,}|whsec_[A-Za-z0-9_-]{8,}/g;

/**
 * The second line of defence, for what the schemas cannot see (a key pasted into a product name,
 * a query string, a body that is not JSON): every key- or secret-like run of `text` replaced by
 * REDACTED. Looks for the prefixes first, which costs a scan of the text and no more when there
 * are none.
 */
export function redactSecretLike(text: string): string {
  if (!text.includes("svc_") && !text.includes("whsec_")) return text;
  return text.replace(SECRET_LIKE, REDACTED);
}
