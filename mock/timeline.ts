/**
 * What makes a generated stream believable: a timeline that fits its status, and the brand's
 * vertical. Used by the dynamic mock for every stream it answers (listed, read, in analytics).
 */
import { streamStatusValues } from "../generated/api.ts";
import type { Vertical } from "../server/domain/types.ts";
import { platformsOf } from "../server/domain/vertical.ts";
import { createdAgoMs, hash } from "./stable-hash.ts";

type Json = Record<string, any>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const STATUSES: ReadonlySet<string> = new Set(streamStatusValues);

/**
 * Gives a stream (any representation) a timeline that fits its status, relative to `now`: created
 * a few hours before; `live` since 20 s after creation; `ended` up to an hour after that; `error`
 * 5 minutes after creation (the preparing time-out) unless it had gone live. Only fields the object
 * has are set. The same stream and `now` give the same timestamps.
 */
export function settle(stream: Json, now: Date): void {
  if (!STATUSES.has(stream.status)) return;
  const id = String(stream.stream_id ?? stream.id ?? "");
  const seed = hash(id);
  const created = now.getTime() - createdAgoMs(id);
  const started =
    stream.status === "preparing" || (stream.status === "error" && stream.started_at === null)
      ? null
      : created + 20_000;
  const ended =
    stream.status === "ended"
      ? started! + MINUTE + (seed % HOUR)
      : stream.status === "error"
        ? (started ?? created) + 5 * MINUTE
        : null;
  const set = (field: string, time: number | null) => {
    if (field in stream) stream[field] = time === null ? null : new Date(time).toISOString();
  };
  set("created_at", created);
  set("started_at", started);
  set("ended_at", ended);
  if (stream.status === "preparing" && "viewer_count" in stream) stream.viewer_count = 0;
}

/**
 * Puts a stream in the brand's vertical, as the server's data always is: its `vertical` is the
 * brand's, and an igaming stream's platform one the vertical permits (the same for the same stream).
 */
export function fitVertical(stream: Json, vertical: Vertical): void {
  if ("vertical" in stream) stream.vertical = vertical;
  const platforms = platformsOf(vertical);
  if (platforms && typeof stream.platform === "string" && !platforms.includes(stream.platform))
    stream.platform = platforms[hash(`platform:${stream.stream_id ?? stream.id}`) % platforms.length];
}
