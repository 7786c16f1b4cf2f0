/**
 * The JSON report of `redocly diff --format json` (reportVersion 1), as far as the gate reads it,
 * and how its changes are printed.
 */
export type Impact = "major" | "minor" | "patch";

export interface Place {
  file: string;
  pointer: string;
  line: number;
  col: number;
  value?: unknown;
}

export interface Verdict {
  ruleId: string;
  impact: Impact;
  message: string;
  location: Place;
}

export interface Change {
  /** JSON pointer from an operation (or a component nothing uses) to the changed node. */
  path: string;
  kind: "added" | "removed" | "modified";
  impact: Impact;
  verdicts: Verdict[];
  /** The changed keyword of a modified node. */
  property?: string;
  base?: Place;
  revision?: Place;
}

export interface DiffReport {
  reportVersion: string;
  infoVersions: { base: string; revision: string };
  summary: Record<Impact, number>;
  /** The bump the changes need; absent when nothing changed. */
  bump?: Impact;
  changes: Change[];
}

const METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/** `#/paths/~1streams/post/requestBody` → `POST /streams` and `requestBody`. */
export function whereIs(path: string): { heading: string; rest: string } {
  const tokens = path
    .replace(/^#\//, "")
    .split("/")
    .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
  const [root, name, method] = tokens;
  const after = (count: number) => tokens.slice(count).join("/");
  if (root === "paths" && method && METHODS.has(method))
    return { heading: `${method.toUpperCase()} ${name}`, rest: after(3) };
  if (root === "webhooks" && name) return { heading: `webhook ${name}`, rest: after(3) };
  if (root === "paths" && name) return { heading: name, rest: after(2) };
  if (root === "components" && name) return { heading: `components/${name}`, rest: after(2) };
  return { heading: root ?? "document", rest: after(1) };
}

/** One change as lines: impact, kind, where, what; then each rule's message and the place. */
export function describeChange(change: Change, impact: Impact, reasons: string[]): string[] {
  const { heading, rest } = whereIs(change.path);
  const what = [rest, change.kind === "modified" ? change.property : undefined].filter(Boolean).join(" · ");
  const place = change.revision ?? change.base;
  return [
    `  ${impact.padEnd(5)}  ${change.kind.padEnd(8)}  ${heading}${what ? `  ${what}` : ""}`,
    ...change.verdicts.map((verdict) => `           ${verdict.message} (${verdict.ruleId})`),
    ...reasons.map((reason) => `           ${reason} (contract:diff)`),
    ...(place ? [`           at ${place.file}:${place.line}`] : []),
  ];
}
