import { createHmac } from "node:crypto";

/**
 * `X-Service-Signature: t=<unix_seconds>,v1=<hex>`: HMAC-SHA256 keyed by the webhook secret over
 * `{t}.{raw_body}`, lowercase hex. Each attempt is signed afresh with its own `t`.
 */
export function signatureHeader(rawBody: string, secret: string, unixSeconds: number): string {
  const digest = createHmac("sha256", secret).update(`${unixSeconds}.${rawBody}`).digest("hex");
  return `t=${unixSeconds},v1=${digest}`;
}
