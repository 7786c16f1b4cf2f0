/**
 * Webhook verification on WebCrypto (`globalThis.crypto.subtle`), for runtimes without
 * node:crypto: browsers' workers, Deno, Bun, Cloudflare Workers, Vercel Edge. Same checks, same
 * order and same errors as the synchronous `verifyWebhook` (both use webhook-signature.ts).
 */
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
  toHex,
  type RawBody,
  type SignOptions,
  type VerifyOptions,
  type WebhookEvent,
} from "./webhook-signature.ts";

const SHA256_BYTES = 32;

/**
 * Checks a delivery's `X-Service-Signature` against the raw body and the webhook's secret, then
 * parses the body; rejects with the same `WebhookVerificationError` subclasses as `verifyWebhook`.
 * Pass the body exactly as received (`await request.text()` or `await request.arrayBuffer()`).
 * During a rotation pass both secrets, `[newSecret, oldSecret]`: the delivery passes when either
 * signed it.
 */
export async function verifyWebhookAsync(
  rawBody: RawBody,
  signatureHeader: string | undefined,
  secret: WebhookSecrets,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  assertRawBody(rawBody);
  const secrets = secretList(secret);
  const { timestamp, signatures } = parseSignatureHeader(signatureHeader);
  const subtle = webCrypto("verifyWebhookAsync");
  const content = asBufferSource(signedContent(timestamp, rawBody));
  const candidates = signatures.map((candidateHex) => digestBytes(candidateHex, SHA256_BYTES));
  let matched = false;
  // HMAC verify compares in constant time, unlike comparing two hex strings; every pair is
  // compared, without stopping at a match, so the time taken says nothing about which secret signed.
  for (const key of await Promise.all(secrets.map((one) => hmacKey(subtle, one)))) {
    for (const candidate of candidates) {
      if (candidate !== undefined && (await subtle.verify("HMAC", key, asBufferSource(candidate), content)))
        matched = true;
    }
  }
  return acceptVerified(matched, timestamp, rawBody, options);
}

/**
 * Builds an `X-Service-Signature` value for `payload` on WebCrypto, for your own tests of a
 * webhook handler. `timestamp` is in Unix seconds and defaults to now.
 */
export async function signWebhookPayloadAsync(
  payload: RawBody,
  secret: string,
  options: SignOptions = {},
): Promise<string> {
  assertRawBody(payload);
  assertSecret(secret);
  const timestamp = signingTimestamp(options);
  const subtle = webCrypto("signWebhookPayloadAsync");
  const digest = await subtle.sign(
    "HMAC",
    await hmacKey(subtle, secret),
    asBufferSource(signedContent(timestamp, payload)),
  );
  return formatSignatureHeader(timestamp, toHex(new Uint8Array(digest)));
}

function webCrypto(caller: string) {
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) {
    throw new TypeError(
      `${caller} needs WebCrypto (globalThis.crypto.subtle), which this runtime lacks. Browsers offer it on https:// pages ` +
        "and in their workers; Node 20+, Deno, Bun and edge runtimes always have it. On Node, verifyWebhook works without it.",
    );
  }
  return subtle;
}

function hmacKey(subtle: ReturnType<typeof webCrypto>, secret: string) {
  return subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
}

// The helpers build their arrays with `new Uint8Array(length)`, so they sit on a plain
// ArrayBuffer; TypeScript's DOM lib (5.7+) insists on that for BufferSource but cannot see it.
function asBufferSource(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes as Uint8Array<ArrayBuffer>;
}
