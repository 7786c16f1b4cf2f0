export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The first and third quartiles (the medians of the lower and upper halves): the spread around the median. */
export function quartiles(values: number[]): { q1: number; q3: number } {
  const sorted = [...values].sort((a, b) => a - b);
  // One value is its own spread.
  if (sorted.length < 2) return { q1: sorted[0] ?? Number.NaN, q3: sorted[0] ?? Number.NaN };
  const half = Math.floor(sorted.length / 2);
  return { q1: median(sorted.slice(0, half)), q3: median(sorted.slice(sorted.length - half)) };
}

/**
 * The noise of a measurement: two identical servers measured in paired rounds (A then B, the next
 * round B then A), and the median of their differences' sizes. A difference between two targets
 * smaller than this says nothing.
 */
export function pairedNoise(a: number[], b: number[]): number {
  return median(a.map((value, round) => Math.abs(value - b[round]!)));
}

/** The order of a pair in round `round`: A/B, then B/A, so neither always goes first. */
export function pairOrder<T>(pair: readonly [T, T], round: number): [T, T] {
  return round % 2 === 0 ? [pair[0], pair[1]] : [pair[1], pair[0]];
}
