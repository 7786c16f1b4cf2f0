/**
 * YAML text in and out, with js-yaml and the schema Redocly's openapi-core reads documents with
 * (JSON types; dates stay strings, as the contract's examples mean them). Here rather than
 * through openapi-core, which only the build and the tools need: the server reads YAML at run
 * time (its built docs' contract) without it.
 */
import yaml from "js-yaml";

// js-yaml exports its types; @types/js-yaml does not declare them.
const { types } = yaml as typeof yaml & { types: Record<"merge" | "binary" | "omap" | "pairs" | "set", yaml.Type> };
const REDOCLY_SCHEMA = yaml.JSON_SCHEMA.extend({
  implicit: [types.merge],
  explicit: [types.binary, types.omap, types.pairs, types.set],
});

/** YAML text as Redocly reads it. */
export function parseYamlText(text: string): unknown {
  return yaml.load(text, { schema: REDOCLY_SCHEMA });
}

/** A document as YAML: no line folding and no anchors, so it reads like the hand-written contract. */
export function toYamlText(document: unknown): string {
  return yaml.dump(document, { lineWidth: -1, noRefs: true });
}
