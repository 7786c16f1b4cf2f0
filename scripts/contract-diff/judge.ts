/**
 * What `redocly diff` cannot judge for this contract, read from its report: each rule here names
 * a change that needs a new major version although redocly rates it lower.
 * contract/redocly-diff.yaml rates two rules leniently (enum-values-added minor,
 * schema-constraint-changed patch) so that the exceptions this contract makes pass; the first two
 * rules below rate the rest major again.
 */
import type { Change, Place } from "./report.ts";

/**
 * Enums the contract's Versioning section tells clients to expect new values in: error codes and
 * event types ("treat new response fields, new error codes and new event types as possible
 * additions").
 */
const OPEN_ENUMS = [
  /\/properties\/error\/properties\/code\/enum$/,
  /^#\/components\/schemas\/(ErrorCode|WebhookEventType)\/enum$/,
];
const isOpen = (pointer: string) => OPEN_ENUMS.some((open) => open.test(pointer));

/**
 * An upper bound set where there was none documents a limit: the project adds one only where the
 * server already refused longer or larger values (docs/development.md, Releases).
 */
const UPPER_BOUNDS = new Set(["maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties"]);

const show = (value: unknown) => JSON.stringify(value);

/**
 * A request's pattern `^P$` turned into `^(P)?$` accepts exactly what it did plus the empty
 * string: a relaxation, which no client that sent a value matching `^P$` can notice. (In an
 * answer the same change is breaking: clients may now receive "".)
 */
function onlyAllowsEmpty(change: Change): boolean {
  const [before, after] = [change.base?.value, change.revision?.value];
  if (change.property !== "pattern" || typeof before !== "string" || typeof after !== "string") return false;
  if (!/\/(parameters|requestBody)\//.test(change.path)) return false;
  const inner = /^\^(.*)\$$/.exec(before)?.[1];
  return inner !== undefined && after === `^(${inner})?$`;
}
/** The canonical UUID: what `format: uuid` admits in 36 characters (ajv also takes `urn:uuid:…`, 45). */
const UUID_PATTERN = "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$";

/**
 * The canonical UUID pattern set on a string that was already `format: uuid` and at most 36
 * characters admits exactly what it did: the pattern only tells generators (Postman) what to fill.
 */
function uuidPatternRestated(change: Change, schemaAt: SchemaAt): boolean {
  if (change.property !== "pattern" || change.base?.value !== undefined || change.revision?.value !== UUID_PATTERN)
    return false;
  const schema = schemaAt(change.revision);
  return schema?.format === "uuid" && typeof schema.maxLength === "number" && schema.maxLength <= 36;
}

const ruled = (change: Change, ruleId: string) => change.verdicts.filter((verdict) => verdict.ruleId === ruleId);

/** The schema holding a changed keyword, read from the document the place points into. */
export type SchemaAt = (place: Place) => Record<string, unknown> | undefined;

type Rule = (change: Change, schemaAt: SchemaAt) => string | null;

const RULES: Rule[] = [
  function closedEnumGrew(change) {
    const closed = ruled(change, "enum-values-added").filter((verdict) => !isOpen(verdict.location.pointer));
    return closed.length ? "needs a major version: new values are promised only for error codes and event types" : null;
  },
  function constraintNarrowed(change, schemaAt) {
    const newBound = UPPER_BOUNDS.has(change.property ?? "") && change.base?.value === undefined;
    const documentsLimit = change.kind === "modified" && newBound;
    if (!ruled(change, "schema-constraint-changed").length || documentsLimit) return null;
    if (onlyAllowsEmpty(change) || uuidPatternRestated(change, schemaAt)) return null;
    return "needs a major version: only a new upper bound (a documented limit) is a patch";
  },
  function scopeChanged(change) {
    if (change.property !== "x-required-scope" || change.kind === "removed") return null;
    const [before, after] = [show(change.base?.value), show(change.revision?.value)];
    return `x-required-scope ${before} → ${after}: keys without the new scope are refused`;
  },
  function requestDefaultChanged(change) {
    // A whole body's default (an object) only illustrates it; a value's is what the server assumes.
    const before = change.base?.value;
    if (change.property !== "default" || before === undefined || typeof before === "object") return null;
    if (!/\/(parameters|requestBody)\//.test(change.path)) return null;
    return `default ${show(before)} → ${show(change.revision?.value)}: requests that leave it out now get another behaviour`;
  },
  function enumValuesRemoved(change) {
    const [before, after] = [change.base?.value, change.revision?.value];
    if (change.property !== "enum" || !Array.isArray(before) || !Array.isArray(after)) return null;
    const removed = before.filter((value) => !after.some((kept) => show(kept) === show(value)));
    if (!removed.length) return null;
    return `enum values removed: ${removed.map(show).join(", ")}; clients branch on and wait for documented values`;
  },
];

/** Why `change` needs a major version although redocly rated it lower (empty: it does not). */
export function stricterReasons(change: Change, schemaAt: SchemaAt): string[] {
  if (change.impact === "major") return [];
  return RULES.map((rule) => rule(change, schemaAt)).filter((reason): reason is string => reason !== null);
}
