/**
 * Webhook verification on node:crypto, synchronous. Runtimes without node:crypto (browsers'
 * workers, edge runtimes) use `verifyWebhookAsync` from webhooks-async.ts instead, which shares
 * every check and error with this module through webhook-signature.ts.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
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
 */
export function verifyWebhook(rawBody: RawBody, signatureHeader: string | undefined, secret: string, options: VerifyOptions = {}): WebhookEvent {
  assertRawBody(rawBody);
  assertSecret(secret);
  const { timestamp, signatures } = parseSignatureHeader(signatureHeader);
  const expected = hmac(timestamp, rawBody, secret);
  const matched = signatures.some((candidateHex) => {
    const candidate = digestBytes(candidateHex, SHA256_BYTES);
    return candidate !== undefined && timingSafeEqual(candidate, expected);
  });
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

/** HMAC-SHA256 keyed with the secret over `${t}.${rawBody}`, lowercase hex. */
export function computeSignature(timestamp: number, rawBody: RawBody, secret: string): string {
  return hmac(timestamp, rawBody, secret).toString("hex");
}

function hmac(timestamp: number, rawBody: RawBody, secret: string): Buffer {
  return createHmac("sha256", secret).update(signedContent(timestamp, rawBody)).digest();
}
