/** Requests are counted in fixed windows of one UTC minute. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The start of the window `now` falls in. */
export function windowStartOf(now: Date): Date {
  return new Date(Math.floor(now.getTime() / RATE_LIMIT_WINDOW_MS) * RATE_LIMIT_WINDOW_MS);
}

/** Whole seconds until the window `now` falls in ends (1 to 60). */
export function secondsUntilNextWindow(now: Date): number {
  return Math.ceil((windowStartOf(now).getTime() + RATE_LIMIT_WINDOW_MS - now.getTime()) / 1000);
}

/**
 * Per-key fixed one-minute windows held in memory, as the spec states (counters reset when the
 * service restarts). Windows of past minutes are dropped when a new minute begins. What this
 * process alone answers is counted here (`GET /` and the dashboard without a key or session, per
 * address); brands and sessions are counted where store/request-windows.ts says.
 */
export class FixedWindowCounter {
  #window = -1;
  #counts = new Map<string, number>();

  /** The key's count in the current window, without counting. */
  peek(key: string, now: Date): number {
    return Math.floor(now.getTime() / RATE_LIMIT_WINDOW_MS) === this.#window ? (this.#counts.get(key) ?? 0) : 0;
  }

  /** Counts one request; returns the key's count in the current window, this request included. */
  hit(key: string, now: Date): number {
    const window = Math.floor(now.getTime() / RATE_LIMIT_WINDOW_MS);
    if (window !== this.#window) {
      this.#window = window;
      this.#counts.clear();
    }
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    return count;
  }
}
