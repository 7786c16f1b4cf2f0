import { randomBytes } from "node:crypto";

/**
 * UUIDv7 (RFC 9562): the first 48 bits a time in milliseconds, then the version, a 12-bit sequence
 * and 62 random bits. Ids so made sort (as UUIDs and as text) in the order of their times, which
 * lets one index order the request log by time, page it and bound it by time.
 */
function format(ms: number, sequence: number, random: Buffer, at: number): string {
  const time = ms.toString(16).padStart(12, "0");
  const rand = random.toString("hex", at, at + 8);
  // The variant's two bits (10) over the random part's first.
  const variant = ((parseInt(rand.slice(0, 2), 16) & 0x3f) | 0x80).toString(16).padStart(2, "0");
  return `${time.slice(0, 8)}-${time.slice(8)}-${(0x7000 | sequence).toString(16)}-${variant}${rand.slice(2, 4)}-${rand.slice(4)}`;
}

/**
 * Makes UUIDv7s that never go backwards within a process: a time earlier than the last one's
 * (a clock set back) takes the last one's, and ids of the same millisecond count up in the
 * sequence (4,096 of them, then the next millisecond is borrowed).
 */
export class TimeOrderedIds {
  #lastMs = 0;
  #sequence = 0;

  /** `count` ids for events at `times` (ms since the epoch), in order; and the time each was given. */
  next(times: readonly number[]): Array<{ id: string; ms: number }> {
    const random = randomBytes(8 * times.length);
    return times.map((time, index) => {
      let ms = Math.max(0, Math.floor(time));
      if (ms <= this.#lastMs) {
        ms = this.#lastMs;
        this.#sequence += 1;
        if (this.#sequence > 0xfff) {
          ms += 1;
          this.#sequence = 0;
        }
      } else this.#sequence = 0;
      this.#lastMs = ms;
      return { id: format(ms, this.#sequence, random, index * 8), ms };
    });
  }
}

/** The lowest UUIDv7 of the millisecond `ms`: every id made at or after it is at least this. */
export function lowestTimeOrderedId(ms: number): string {
  const time = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${time.slice(0, 8)}-${time.slice(8)}-0000-0000-000000000000`;
}
