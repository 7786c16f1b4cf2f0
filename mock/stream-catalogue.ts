/**
 * The streams the dynamic mock lists: one fixed set per seed, so that a partner can page through
 * it as through the server's. Prism generates the streams from the contract's list schema; this
 * module gives each a stable id of its own, a creator GET /creators lists, the brand's vertical, a
 * timeline that fits its status (drawn back from the moment the set was made, so that every answer
 * for the seed is the same) and a place in the newest-first order. The set's size (20 to 150) follows from the seed, so `total` is the same on
 * every call, and a page is a slice of the set: no stream on two pages.
 */
import type { Vertical } from "../server/domain/types.ts";
import { createdAgoMs, hash } from "./stable-hash.ts";
import { fitVertical, settle } from "./timeline.ts";

type Json = Record<string, any>;

/** Draws one generated page of GET /streams (its `streams`), reproducibly for `seed`. */
export type DrawStreams = (seed: string) => Promise<Json[]>;

export const MIN_STREAMS = 20;
export const MAX_STREAMS = 150;
/** Prism may generate empty pages; a seed that gives nothing after this many draws is an error. */
const MAX_DRAWS = 500;
/** Seeds whose sets are kept (a partner's `Prefer: seed=` picks another set). */
const KEPT_SEEDS = 16;

export function catalogueSize(seed: string): number {
  return MIN_STREAMS + (hash(`size:${seed}`) % (MAX_STREAMS - MIN_STREAMS + 1));
}

/** A version-4 UUID made from `key`, the same for the same key. */
export function stableUuid(key: string): string {
  const hex = [0, 1, 2, 3].map((part) => hash(`${part}:${key}`).toString(16).padStart(8, "0")).join("");
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** One seed's streams, and the moment their timeline is drawn back from. */
export interface StreamSet {
  streams: readonly Json[];
  madeAt: Date;
}

export interface CatalogueOptions {
  /** The creators GET /creators lists: every creator a listed stream names is one of them. */
  creatorIds: readonly string[];
  /** The brand's vertical, which every stream is in. */
  vertical: Vertical;
  now: () => Date;
}

export class StreamCatalogue {
  private readonly sets = new Map<string, Promise<StreamSet>>();
  private readonly draw: DrawStreams;
  private readonly options: CatalogueOptions;

  constructor(draw: DrawStreams, options: CatalogueOptions) {
    this.draw = draw;
    this.options = options;
  }

  /** The set for `seed`, newest first (made on first use, then kept). */
  streams(seed: string): Promise<StreamSet> {
    let set = this.sets.get(seed);
    if (!set) {
      set = this.make(seed);
      set.catch(() => this.sets.delete(seed));
      if (this.sets.size >= KEPT_SEEDS) this.sets.delete(this.sets.keys().next().value!);
      this.sets.set(seed, set);
    }
    return set;
  }

  private async make(seed: string): Promise<StreamSet> {
    const { creatorIds, vertical, now } = this.options;
    const size = catalogueSize(seed);
    const drawn: Json[] = [];
    for (let draw = 0; drawn.length < size; draw++) {
      if (draw === MAX_DRAWS)
        throw new Error(`the mock generated ${drawn.length} of ${size} streams for seed ${seed} in ${MAX_DRAWS} draws`);
      drawn.push(...(await this.draw(`${seed}:${draw}`)));
    }
    const madeAt = now();
    const streams = drawn.slice(0, size).map((generated, index) => {
      const id = stableUuid(`${seed}:${index}`);
      const stream: Json = { ...generated, id };
      // null stays: a stream whose creator can no longer be resolved names none.
      if (typeof stream.creator_id === "string")
        stream.creator_id = creatorIds[hash(`creator:${id}`) % creatorIds.length];
      // A room of its own, the same in the list and the detail (whose schema needs one).
      if ("room_name" in stream) stream.room_name = `room_${stableUuid(`room:${id}`).replace(/-/g, "").slice(0, 12)}`;
      fitVertical(stream, vertical);
      settle(stream, madeAt);
      return stream;
    });
    return { streams: streams.sort((a, b) => createdAgoMs(a.id) - createdAgoMs(b.id)), madeAt };
  }
}

/** One page of a set as the server pages: the status filter first, then `offset` and `limit`. */
export function pageOf(
  streams: readonly Json[],
  { limit, offset, status }: { limit: number; offset: number; status: string | undefined },
): { streams: Json[]; total: number } {
  const matching = status === undefined ? streams : streams.filter((stream) => stream.status === status);
  return {
    streams: matching.slice(offset, offset + limit).map((stream) => structuredClone(stream)),
    total: matching.length,
  };
}
