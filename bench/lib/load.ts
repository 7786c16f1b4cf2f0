import autocannon, { type Request } from "autocannon";

export interface Load {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Requests sent in turn on each connection (a cycle when more than one). */
  requests: Request[];
  connections: number;
  /** Seconds; ignored when `amount` is given. */
  duration?: number;
  /** Total number of requests to send. */
  amount?: number;
}

export interface Measurement {
  requests: number;
  rps: number;
  /** Milliseconds, from every response's own timing (autocannon's histogram rounds to whole ms). */
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  seconds: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** What one autocannon run saw: every response's latency, the failures, the time it took. */
export interface Run {
  latencies: number[];
  non2xx: number;
  errors: number;
  seconds: number;
}

/** Runs autocannon in this process and times every response (from request written to response read). */
export function run(load: Load): Promise<Run> {
  const latencies: number[] = [];
  let non2xx = 0;
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const instance = autocannon(
      {
        url: load.url,
        connections: load.connections,
        requests: load.requests,
        timeout: 10,
        ...(load.amount === undefined ? { duration: load.duration ?? 10 } : { amount: load.amount }),
      },
      (error, result) => {
        if (error) return reject(error);
        resolve({
          latencies,
          non2xx,
          errors: result.errors + result.timeouts,
          seconds: Number(process.hrtime.bigint() - started) / 1e9,
        });
      },
    );
    instance.on("response", (_client: unknown, status: number, _bytes: number, responseTime: number) => {
      latencies.push(responseTime);
      if (status < 200 || status > 299) non2xx += 1;
    });
  });
}

/** Several runs of one load taken as one: requests over total time, percentiles over every response. */
export function summarise(runs: Run[]): Measurement {
  const sorted = Float64Array.from(runs.flatMap((one) => one.latencies)).sort();
  const seconds = runs.reduce((sum, one) => sum + one.seconds, 0);
  return {
    requests: sorted.length,
    rps: sorted.length / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    non2xx: runs.reduce((sum, one) => sum + one.non2xx, 0),
    errors: runs.reduce((sum, one) => sum + one.errors, 0),
    seconds,
  };
}

export async function measure(load: Load): Promise<Measurement> {
  return summarise([await run(load)]);
}
