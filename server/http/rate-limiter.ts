/**
 * Per-key fixed one-minute windows held in memory, as the spec states (counters reset when the
 * service restarts). Windows of past minutes are dropped when a new minute begins.
 */
export class FixedWindowRateLimiter {
  #window = -1;
  #counts = new Map<string, number>();

  /** Counts one request; false when it goes over `limit` for the current minute. */
  hit(key: string, limit: number, now: Date): boolean {
    const window = Math.floor(now.getTime() / 60_000);
    if (window !== this.#window) {
      this.#window = window;
      this.#counts.clear();
    }
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    return count <= limit;
  }
}
