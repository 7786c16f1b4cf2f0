/**
 * Webhook verification on node:crypto, synchronous. Runtimes without node:crypto (browsers'
 * workers, edge runtimes) use `verifyWebhookAsync` from webhooks-async.ts instead, which shares
 * every check and error with this module through webhook-signature.ts.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { secretList, type WebhookSecrets } from "./webhook-secrets.ts";
import {
  acceptVerified,
  assertRawBody,
  assertSecret,
  digestBytes,
  formatSignatureHeader,
  parseSignatureHeader,
  signedContent,
  signingTimestamp,
  type RawBody,
  type SignOptions,
  type VerifyOptions,
  type WebhookEvent,
} from "./webhook-signature.ts";

export * from "./webhook-public.ts";

const SHA256_BYTES = 32;

/**
 * Checks a delivery's `X-Service-Signature` against the raw body and the webhook's secret, then
 * parses the body. Pass the body exactly as received (`express.raw()`), not a parsed object.
 * During a rotation pass both secrets, `[newSecret, oldSecret]`: the delivery passes when either
 * signed it.
 */
export function verifyWebhook(
  rawBody: RawBody,
  signatureHeader: string | undefined,
  secret: WebhookSecrets,
  options: VerifyOptions = {},
): WebhookEvent {
  assertRawBody(rawBody);
  const secrets = secretList(secret);
  const { timestamp, signatures } = parseSignatureHeader(signatureHeader);
  const candidates = signatures.map((candidateHex) => digestBytes(candidateHex, SHA256_BYTES));
  let matched = false;
  // Every pair is compared, without stopping at a match, so the time taken says nothing about
  // which secret signed.
  for (const expected of secrets.map((one) => hmac(timestamp, rawBody, one))) {
    for (const candidate of candidates) {
      if (candidate !== undefined && timingSafeEqual(candidate, expected)) matched = true;
    }
  }
  return acceptVerified(matched, timestamp, rawBody, options);
}

/**
 * Builds an `X-Service-Signature` value for `payload`, for your own tests of a webhook handler.
 * `timestamp` is in Unix seconds and defaults to now.
 */
export function signWebhookPayload(payload: RawBody, secret: string, options: SignOptions = {}): string {
  assertSecret(secret);
  const timestamp = signingTimestamp(options);
  return formatSignatureHeader(timestamp, computeSignature(timestamp, payload, secret));
}

/** The user agent of the service's webhook deliveries (and of the CLI's forwarded and graded ones). */
export const DELIVERY_USER_AGENT = "LiveStreamHosting-Webhooks/1.0";

/**
 * The headers of a webhook delivery of `body` signed with `secret` at `timestamp` (Unix seconds):
 * what the service sends, and what `live-stream-hosting listen` and `grade` send, from this one
 * place, so a forwarded event is signed exactly as a delivery.
 */
export function webhookDeliveryHeaders(body: string, secret: string, timestamp: number): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": DELIVERY_USER_AGENT,
    "x-service-signature": signWebhookPayload(body, secret, { timestamp }),
  };
}

/** HMAC-SHA256 keyed with the secret over `${t}.${rawBody}`, lowercase hex. */
export function computeSignature(timestamp: number, rawBody: RawBody, secret: string): string {
  return hmac(timestamp, rawBody, secret).toString("hex");
}

function hmac(timestamp: number, rawBody: RawBody, secret: string): Buffer {
  return createHmac("sha256", secret).update(signedContent(timestamp, rawBody)).digest();
}
