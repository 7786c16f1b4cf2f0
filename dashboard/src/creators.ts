import type { Schemas } from "./api.ts";

export type Creator = Schemas["CreatorSummary"];

/**
 * The creators a stream is worth starting with: those whose status is "available". A busy one,
 * or one whose status is unknown (null), is left out of the picker; the API still accepts any
 * listed id. Sorted by name, as GET /creators lists them, whatever order they came in.
 */
export function activeCreators(creators: readonly Creator[]): Creator[] {
  return creators
    .filter((creator) => creator.status === "available")
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** What the picker shows for a creator: the name people know, the id the API takes. */
export function creatorLabel(creator: Creator): string {
  return `${creator.name} (${creator.id})`;
}
