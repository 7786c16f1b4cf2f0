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

/** Runs autocannon in this process and measures every response (latency from request written to response read). */
export function measure(load: Load): Promise<Measurement> {
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
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const sorted = Float64Array.from(latencies).sort();
        resolve({
          requests: latencies.length,
          rps: latencies.length / seconds,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          non2xx,
          errors: result.errors + result.timeouts,
          seconds,
        });
      },
    );
    instance.on("response", (_client: unknown, status: number, _bytes: number, responseTime: number) => {
      latencies.push(responseTime);
      if (status < 200 || status > 299) non2xx += 1;
    });
  });
}
