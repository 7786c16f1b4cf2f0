import { type Change, child, severityOf, type Writer } from "./changes.ts";
import { deref } from "./refs.ts";

export interface SchemaScope {
  oldDoc: Record<string, any>;
  newDoc: Record<string, any>;
  writer: Writer;
  /** What the data is called in messages: "request", "response", or for webhooks "delivery", "receiver's answer". */
  side: string;
  where: string;
  /** Inside an error response: its `error.code` may gain codes, as the contract's Versioning section says. */
  errorResponse: boolean;
  out: Change[];
}

/**
 * Component schemas whose values the contract's Versioning section tells clients to expect more
 * of ("new event types"); a webhook only ever receives the types it registered for.
 */
const OPEN_ENUM_SCHEMAS = new Set(["#/components/schemas/WebhookEventType"]);

const UPPER_BOUNDS = ["maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties"] as const;
const LOWER_BOUNDS = ["minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties"] as const;
/** Keywords that only restrict: adding one narrows, removing one widens, changing one does both. */
const RESTRICTIONS = ["pattern", "format", "multipleOf", "not"] as const;

const show = (value: unknown) => JSON.stringify(value);

/**
 * Compares what a schema lets through, old against new, from the side of the client: for data the
 * client writes (`writer: client`) fewer accepted values break it; for data it reads, more
 * possible values break it, except the additions the contract promises (new response fields, new
 * error codes, new event types). Values removed from an enum break either way: a client may send
 * or wait for a documented value. `path` holds the property names from the body's root.
 */
export function compareSchema(scope: SchemaScope, oldNode: unknown, newNode: unknown, pointer: string, path: readonly string[] = [], seen: ReadonlySet<string> = new Set()): void {
  const before = deref(scope.oldDoc, oldNode);
  const after = deref(scope.newDoc, newNode);
  const pair = `${before.ref}|${after.ref}`;
  if (before.ref && after.ref) {
    if (seen.has(pair)) return; // a recursive schema: this pair is being compared further up
    seen = new Set(seen).add(pair);
  }
  const a = asSchema(before.node);
  const b = asSchema(after.node);
  const report = (at: string, message: string, effect: { narrows: boolean; widens: boolean }) =>
    scope.out.push({ severity: severityOf(scope.writer, effect), where: scope.where, pointer: at, message: `${message} (${scope.side})` });

  compareTypes(a, b, pointer, report);
  const open = OPEN_ENUM_SCHEMAS.has(before.ref ?? "") || (scope.errorResponse && path.join(".") === "error.code");
  compareEnum(scope, a, b, pointer, open, report);
  compareBounds(a, b, pointer, report);
  // A whole object's default only illustrates the body; a value's default is what the server assumes.
  if (scope.writer === "client" && a.default !== undefined && a.type !== "object" && show(a.default) !== show(b.default)) {
    report(child(pointer, "default"), `default changed from ${show(a.default)} to ${b.default === undefined ? "none" : show(b.default)}: clients that leave it out get another behaviour`, { narrows: true, widens: true });
  }
  compareObject(scope, a, b, pointer, path, seen, report);
  if (a.items !== undefined || b.items !== undefined) {
    if (a.items !== undefined && b.items !== undefined) compareSchema(scope, a.items, b.items, child(pointer, "items"), path, seen);
    else report(child(pointer, "items"), `array item schema ${a.items === undefined ? "added" : "removed"}`, { narrows: a.items === undefined, widens: b.items === undefined });
  }
  compareComposition(scope, a, b, pointer, path, seen, report);
}

type Report = (pointer: string, message: string, effect: { narrows: boolean; widens: boolean }) => void;

/** Boolean schemas as objects: `true` allows anything, `false` nothing. */
function asSchema(node: unknown): Record<string, any> {
  if (node === true || node === undefined) return {};
  if (node === false) return { not: {} };
  return node as Record<string, any>;
}

function typeSet(schema: Record<string, any>): Set<string> | null {
  if (schema.type === undefined) return null;
  const types = new Set<string>(Array.isArray(schema.type) ? schema.type : [schema.type]);
  if (schema.nullable === true) types.add("null");
  return types;
}

function compareTypes(a: Record<string, any>, b: Record<string, any>, pointer: string, report: Report): void {
  const before = typeSet(a);
  const after = typeSet(b);
  // An integer is a number: number → integer narrows, integer → number widens.
  const covers = (set: Set<string>, type: string) => set.has(type) || (type === "integer" && set.has("number"));
  const removed = before && after ? [...before].filter((type) => !covers(after, type)) : [];
  const added = before && after ? [...after].filter((type) => !covers(before, type)) : [];
  const narrows = removed.length > 0 || (before === null && after !== null);
  const widens = added.length > 0 || (before !== null && after === null);
  if (narrows || widens) {
    const name = (set: Set<string> | null) => (set ? [...set].join(" | ") : "any type");
    report(child(pointer, "type"), `type changed from ${name(before)} to ${name(after)}`, { narrows, widens });
  }
}

function enumValues(schema: Record<string, any>): unknown[] | null {
  if (schema.const !== undefined) return [schema.const];
  return Array.isArray(schema.enum) ? schema.enum : null;
}

function compareEnum(scope: SchemaScope, a: Record<string, any>, b: Record<string, any>, pointer: string, open: boolean, report: Report): void {
  const before = enumValues(a);
  const after = enumValues(b);
  const at = child(pointer, b.const !== undefined || a.const !== undefined ? "const" : "enum");
  if (before === null && after === null) return;
  if (before === null || after === null) {
    report(at, before === null ? `values restricted to ${show(after)}` : `restriction to ${show(before)} removed`, { narrows: before === null, widens: after === null });
    return;
  }
  const keys = (values: unknown[]) => new Set(values.map(show));
  const [had, has] = [keys(before), keys(after)];
  for (const value of before.filter((value) => !has.has(show(value)))) {
    scope.out.push({ severity: "breaking", where: scope.where, pointer: at, message: `enum value ${show(value)} removed (${scope.side})` });
  }
  for (const value of after.filter((value) => !had.has(show(value)))) {
    const promised = open && scope.writer === "server";
    report(at, `enum value ${show(value)} added${promised ? "; the contract tells clients to expect new values here" : ""}`, { narrows: false, widens: !promised });
  }
}

function compareBounds(a: Record<string, any>, b: Record<string, any>, pointer: string, report: Report): void {
  const bounds: Array<[string, 1 | -1]> = [...UPPER_BOUNDS.map((key) => [key, 1] as [string, 1]), ...LOWER_BOUNDS.map((key) => [key, -1] as [string, -1])];
  for (const [key, direction] of bounds) {
    const [before, after] = [a[key], b[key]];
    if (show(before) === show(after)) continue;
    const at = child(pointer, key);
    if (before === undefined) report(at, `${key} ${show(after)} added`, { narrows: true, widens: false });
    else if (after === undefined) report(at, `${key} ${show(before)} removed`, { narrows: false, widens: true });
    else if (typeof before !== "number" || typeof after !== "number") report(at, `${key} changed from ${show(before)} to ${show(after)}`, { narrows: true, widens: true });
    else {
      // An upper bound that falls, or a lower bound that rises, lets fewer values through.
      const narrows = (after - before) * direction < 0;
      report(at, `${key} ${after < before ? "lowered" : "raised"} from ${before} to ${after}`, { narrows, widens: !narrows });
    }
  }
  for (const key of RESTRICTIONS) {
    const [before, after] = [a[key], b[key]];
    if (show(before) === show(after)) continue;
    const at = child(pointer, key);
    if (before === undefined) report(at, `${key} ${show(after)} added`, { narrows: true, widens: false });
    else if (after === undefined) report(at, `${key} ${show(before)} removed`, { narrows: false, widens: true });
    else report(at, `${key} changed from ${show(before)} to ${show(after)}`, { narrows: true, widens: true });
  }
  if (Boolean(a.uniqueItems) !== Boolean(b.uniqueItems)) {
    report(child(pointer, "uniqueItems"), `uniqueItems ${b.uniqueItems ? "added" : "removed"}`, { narrows: Boolean(b.uniqueItems), widens: Boolean(a.uniqueItems) });
  }
}

function compareObject(scope: SchemaScope, a: Record<string, any>, b: Record<string, any>, pointer: string, path: readonly string[], seen: ReadonlySet<string>, report: Report): void {
  const before: Record<string, unknown> = a.properties ?? {};
  const after: Record<string, unknown> = b.properties ?? {};
  const hadRequired = new Set<string>(a.required ?? []);
  const hasRequired = new Set<string>(b.required ?? []);
  for (const name of Object.keys(before)) {
    const at = child(child(pointer, "properties"), name);
    if (!(name in after)) {
      scope.out.push({ severity: "breaking", where: scope.where, pointer: at, message: `${scope.side} field ${name} removed` });
      continue;
    }
    compareSchema(scope, before[name], after[name], at, [...path, name], seen);
    if (hadRequired.has(name) !== hasRequired.has(name)) {
      const nowRequired = hasRequired.has(name);
      // A field a client must now send narrows the request; a field no longer always sent widens the response.
      report(at, `field ${name} ${nowRequired ? "now required" : "no longer required"}`, { narrows: nowRequired, widens: !nowRequired });
    }
  }
  for (const name of Object.keys(after).filter((name) => !(name in before))) {
    const at = child(child(pointer, "properties"), name);
    if (scope.writer === "server") scope.out.push({ severity: "compatible", where: scope.where, pointer: at, message: `${scope.side} field ${name} added; the contract tells clients to expect new fields` });
    else report(at, `${hasRequired.has(name) ? "required" : "optional"} ${scope.side} field ${name} added`, { narrows: hasRequired.has(name), widens: !hasRequired.has(name) });
  }
  const [extraBefore, extraAfter] = [a.additionalProperties, b.additionalProperties];
  if (isSchemaObject(extraBefore) && isSchemaObject(extraAfter)) {
    compareSchema(scope, extraBefore, extraAfter, child(pointer, "additionalProperties"), [...path, "*"], seen);
  } else if ((extraBefore === false) !== (extraAfter === false)) {
    const closes = extraAfter === false;
    // Closing a response only promises less; opening one is covered by the promise of new fields.
    const effect = scope.writer === "client" ? { narrows: closes, widens: !closes } : { narrows: false, widens: false };
    report(child(pointer, "additionalProperties"), closes ? "undocumented fields now refused" : "undocumented fields now allowed", effect);
  }
}

function isSchemaObject(value: unknown): boolean {
  return typeof value === "object" && value !== null;
}

/**
 * allOf members, anyOf and oneOf branches are compared position by position: a member added to
 * allOf narrows, a branch added to anyOf or oneOf widens.
 */
function compareComposition(scope: SchemaScope, a: Record<string, any>, b: Record<string, any>, pointer: string, path: readonly string[], seen: ReadonlySet<string>, report: Report): void {
  for (const key of ["allOf", "anyOf", "oneOf"] as const) {
    const before: unknown[] = a[key] ?? [];
    const after: unknown[] = b[key] ?? [];
    const common = Math.min(before.length, after.length);
    for (let index = 0; index < common; index += 1) compareSchema(scope, before[index], after[index], child(child(pointer, key), index), path, seen);
    if (before.length === after.length) continue;
    const grew = after.length > before.length;
    const narrows = key === "allOf" ? grew : !grew;
    report(child(pointer, key), `${key} went from ${before.length} to ${after.length} ${key === "allOf" ? "members" : "branches"}`, { narrows, widens: !narrows });
  }
}
