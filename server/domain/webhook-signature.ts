import { createHmac } from "node:crypto";

/**
 * `X-Service-Signature: t=<unix_seconds>,v1=<hex>`: HMAC-SHA256 keyed by the webhook secret over
 * `{t}.{raw_body}`, lowercase hex. Each attempt is signed afresh with its own `t`.
 */
export function signatureHeader(rawBody: string, secret: string, unixSeconds: number): string {
  const digest = createHmac("sha256", secret).update(`${unixSeconds}.${rawBody}`).digest("hex");
  return `t=${unixSeconds},v1=${digest}`;
}

/** Attempt n (1-based) failed: when the next one is due, or null after the last. */
export function nextAttemptDelay(attempt: number, scheduleMs: readonly number[]): number | null {
  return scheduleMs[attempt - 1] ?? null;
}
