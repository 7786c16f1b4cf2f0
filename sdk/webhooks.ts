import { createHmac, timingSafeEqual } from "node:crypto";
import type { components } from "../generated/api.ts";

/** The JSON body of a webhook delivery. */
export type WebhookEvent = components["schemas"]["WebhookEvent"];

/** Name of the HTTP header that carries the signature (Node lower-cases it in `req.headers`). */
export const SIGNATURE_HEADER = "X-Service-Signature";

/** The spec's signature age limit, in seconds. */
export const DEFAULT_TOLERANCE_SEC = 300;

/** Base class of every reason a delivery is refused; answer such a request with 400. */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
}

/** The signature header is missing, or lacks `t=<unix seconds>` or `v1=<hex>`. */
export class WebhookSignatureHeaderError extends WebhookVerificationError {
  override name = "WebhookSignatureHeaderError";
}

/** No `v1` digest matches the body: wrong secret, altered body, or a body that was re-serialised. */
export class WebhookSignatureMismatchError extends WebhookVerificationError {
  override name = "WebhookSignatureMismatchError";
}

/** The signed timestamp is older than the tolerance: possibly a replayed delivery. */
export class WebhookTimestampTooOldError extends WebhookVerificationError {
  override name = "WebhookTimestampTooOldError";
  constructor(
    readonly ageSec: number,
    readonly toleranceSec: number,
  ) {
    super(
      `Webhook timestamp is ${ageSec} s old, beyond the ${toleranceSec} s tolerance. ` +
        "Reject it; if every delivery fails this way, check the receiving machine's clock.",
    );
  }
}

/** The signed timestamp is further in the future than the tolerance: a forged or skewed clock. */
export class WebhookTimestampInFutureError extends WebhookVerificationError {
  override name = "WebhookTimestampInFutureError";
  constructor(
    readonly aheadSec: number,
    readonly toleranceSec: number,
  ) {
    super(
      `Webhook timestamp is ${aheadSec} s in the future, beyond the ${toleranceSec} s tolerance. ` +
        "Check the receiving machine's clock.",
    );
  }
}

export interface VerifyOptions {
  /** Maximum age (and maximum lead into the future) of the signed timestamp. Default 300. */
  toleranceSec?: number;
  /** Current time in milliseconds since the epoch. */
  now?: () => number;
}

export interface SignatureHeader {
  timestamp: number;
  signatures: string[];
}

/**
 * Checks a delivery's `X-Service-Signature` against the raw body and the webhook's secret, then
 * parses the body. Pass the body exactly as received (`express.raw()`), not a parsed object.
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  signatureHeader: string | undefined,
  secret: string,
  { toleranceSec = DEFAULT_TOLERANCE_SEC, now = Date.now }: VerifyOptions = {},
): WebhookEvent {
  assertRawBody(rawBody);
  assertSecret(secret);
  const { timestamp, signatures } = parseSignatureHeader(signatureHeader);

  const expected = Buffer.from(computeSignature(timestamp, rawBody, secret), "hex");
  if (!signatures.some((candidate) => digestsEqual(expected, candidate))) {
    throw new WebhookSignatureMismatchError(
      "No v1 signature matches the payload. Are you passing the raw request body, exactly as received? " +
        "A body parsed and re-serialised (express.json(), JSON.stringify) never matches. " +
        "Also check you use the secret of the webhook this delivery was sent to.",
    );
  }

  const nowSec = Math.floor(now() / 1000);
  if (nowSec - timestamp > toleranceSec) throw new WebhookTimestampTooOldError(nowSec - timestamp, toleranceSec);
  if (timestamp - nowSec > toleranceSec) throw new WebhookTimestampInFutureError(timestamp - nowSec, toleranceSec);

  const text = typeof rawBody === "string" ? rawBody : rawBody.toString("utf8");
  try {
    return JSON.parse(text) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError("The signature is valid but the body is not JSON.");
  }
}

/**
 * Builds an `X-Service-Signature` value for `payload`, for your own tests of a webhook handler.
 * `timestamp` is in Unix seconds and defaults to now.
 */
export function signWebhookPayload(
  payload: string,
  secret: string,
  { timestamp = Math.floor(Date.now() / 1000) }: { timestamp?: number } = {},
): string {
  assertSecret(secret);
  if (!Number.isSafeInteger(timestamp)) {
    throw new TypeError(`timestamp must be whole Unix seconds, got ${timestamp}.`);
  }
  return `t=${timestamp},v1=${computeSignature(timestamp, payload, secret)}`;
}

/** Splits `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`; unknown keys (future schemes) are ignored. */
export function parseSignatureHeader(header: string | undefined): SignatureHeader {
  if (typeof header !== "string" || header.trim() === "") {
    throw new WebhookSignatureHeaderError(
      `No ${SIGNATURE_HEADER} header. Pass req.headers["x-service-signature"] from the delivery request.`,
    );
  }
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const item of header.split(",")) {
    const separator = item.indexOf("=");
    if (separator === -1) continue;
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === "t" && /^\d{1,15}$/.test(value)) timestamp = Number(value);
    if (key === "v1" && value !== "") signatures.push(value);
  }
  if (timestamp === undefined) {
    throw new WebhookSignatureHeaderError(
      `${SIGNATURE_HEADER} has no valid t=<unix seconds>; expected "t=<unix_seconds>,v1=<hex>".`,
    );
  }
  if (signatures.length === 0) {
    throw new WebhookSignatureHeaderError(
      `${SIGNATURE_HEADER} has no v1=<hex> signature; expected "t=<unix_seconds>,v1=<hex>".`,
    );
  }
  return { timestamp, signatures };
}

/** HMAC-SHA256 keyed with the secret over `${t}.${rawBody}`, lowercase hex. */
export function computeSignature(timestamp: number, rawBody: string | Buffer, secret: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex");
}

function digestsEqual(expected: Buffer, candidateHex: string): boolean {
  if (!/^[0-9a-fA-F]+$/.test(candidateHex)) return false;
  const candidate = Buffer.from(candidateHex, "hex");
  return candidate.length === expected.length && timingSafeEqual(candidate, expected);
}

function assertRawBody(rawBody: unknown): asserts rawBody is string | Buffer {
  if (typeof rawBody === "string" || Buffer.isBuffer(rawBody)) return;
  throw new TypeError(
    `rawBody must be the request body as received (string or Buffer), got ${rawBody === null ? "null" : typeof rawBody}. ` +
      'With Express, read it with express.raw({ type: "application/json" }) on the webhook route.',
  );
}

function assertSecret(secret: unknown): asserts secret is string {
  if (typeof secret === "string" && secret !== "") return;
  throw new TypeError("secret must be the webhook's signing secret (whsec_…), returned once by webhooks.create().");
}
