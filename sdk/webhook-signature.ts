/**
 * What `verifyWebhook` (node:crypto) and `verifyWebhookAsync` (WebCrypto) share: the header
 * format, the order of checks, the error classes and their messages. Pure helpers with no crypto
 * and no Node globals, so the WebCrypto entry can import them in any runtime.
 */
import type { components } from "../generated/api.ts";

/** The JSON body of a webhook delivery. */
export type WebhookEvent = components["schemas"]["WebhookEvent"];

/** `stream.started`, `stream.ended` or `stream.error`. */
export type WebhookEventType = components["schemas"]["WebhookEventType"];

/** A delivery's body exactly as received: text, bytes (a Node `Buffer` is a `Uint8Array`) or an `ArrayBuffer`. */
export type RawBody = string | Uint8Array | ArrayBuffer;

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
  constructor() {
    super(
      "No v1 signature matches the payload. Are you passing the raw request body, exactly as received? " +
        "A body parsed and re-serialised (express.json(), JSON.stringify) never matches. " +
        "Also check you use the secret of the webhook this delivery was sent to.",
    );
  }
}

/** The signed timestamp is older than the tolerance: possibly a replayed delivery. */
export class WebhookTimestampTooOldError extends WebhookVerificationError {
  override name = "WebhookTimestampTooOldError";
  readonly ageSec: number;
  readonly toleranceSec: number;
  constructor(ageSec: number, toleranceSec: number) {
    super(
      `Webhook timestamp is ${ageSec} s old, beyond the ${toleranceSec} s tolerance. ` +
        "Reject it; if every delivery fails this way, check the receiving machine's clock.",
    );
    this.ageSec = ageSec;
    this.toleranceSec = toleranceSec;
  }
}

/** The signed timestamp is further in the future than the tolerance: a forged or skewed clock. */
export class WebhookTimestampInFutureError extends WebhookVerificationError {
  override name = "WebhookTimestampInFutureError";
  readonly aheadSec: number;
  readonly toleranceSec: number;
  constructor(aheadSec: number, toleranceSec: number) {
    super(
      `Webhook timestamp is ${aheadSec} s in the future, beyond the ${toleranceSec} s tolerance. ` +
        "Check the receiving machine's clock.",
    );
    this.aheadSec = aheadSec;
    this.toleranceSec = toleranceSec;
  }
}

export interface VerifyOptions {
  /** Maximum age (and maximum lead into the future) of the signed timestamp. Default 300. */
  toleranceSec?: number | undefined;
  /** Current time in milliseconds since the epoch. */
  now?: (() => number) | undefined;
}

export interface SignOptions {
  /** Unix seconds; default now. */
  timestamp?: number | undefined;
}

export interface SignatureHeader {
  timestamp: number;
  signatures: string[];
}

/** Splits `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`; unknown keys (future schemes) are ignored. */
export function parseSignatureHeader(header: string | undefined): SignatureHeader {
  if (typeof header !== "string" || header.trim() === "") {
    throw new WebhookSignatureHeaderError(
      `No ${SIGNATURE_HEADER} header. Pass req.headers["x-service-signature"] (Node) or ` +
        `request.headers.get("${SIGNATURE_HEADER}") (fetch) from the delivery request.`,
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

/**
 * The checks after the digests were compared, in the one order both verifiers share: signature,
 * then the timestamp window, then the body as JSON. Checking the signature first means an
 * attacker learns nothing about clocks or parsing from an unsigned request.
 */
export function acceptVerified(
  matched: boolean,
  timestamp: number,
  rawBody: RawBody,
  { toleranceSec = DEFAULT_TOLERANCE_SEC, now = Date.now }: VerifyOptions = {},
): WebhookEvent {
  if (!matched) throw new WebhookSignatureMismatchError();
  const nowSec = Math.floor(now() / 1000);
  if (nowSec - timestamp > toleranceSec) throw new WebhookTimestampTooOldError(nowSec - timestamp, toleranceSec);
  if (timestamp - nowSec > toleranceSec) throw new WebhookTimestampInFutureError(timestamp - nowSec, toleranceSec);
  try {
    return JSON.parse(bodyText(rawBody)) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError("The signature is valid but the body is not JSON.");
  }
}

/** The bytes that are signed: `${t}.` followed by the raw body. */
export function signedContent(timestamp: number, rawBody: RawBody): Uint8Array {
  const prefix = new TextEncoder().encode(`${timestamp}.`);
  const body = bodyBytes(rawBody);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  return content;
}

/** The header value for a digest: `t=<seconds>,v1=<hex>`. */
export function formatSignatureHeader(timestamp: number, digestHex: string): string {
  return `t=${timestamp},v1=${digestHex}`;
}

/** The timestamp to sign with, checked: whole Unix seconds, default now. */
export function signingTimestamp({ timestamp = Math.floor(Date.now() / 1000) }: SignOptions = {}): number {
  if (!Number.isSafeInteger(timestamp)) {
    throw new TypeError(`timestamp must be whole Unix seconds, got ${timestamp}.`);
  }
  return timestamp;
}

/** A `v1` value as bytes, or `undefined` when it is not hex of the given length (so it cannot match). */
export function digestBytes(candidateHex: string, byteLength: number): Uint8Array | undefined {
  if (candidateHex.length !== byteLength * 2 || !/^[0-9a-fA-F]+$/.test(candidateHex)) return undefined;
  const bytes = new Uint8Array(byteLength);
  for (let i = 0; i < byteLength; i++) bytes[i] = parseInt(candidateHex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

export function bodyBytes(rawBody: RawBody): Uint8Array {
  if (typeof rawBody === "string") return new TextEncoder().encode(rawBody);
  return rawBody instanceof Uint8Array ? rawBody : new Uint8Array(rawBody);
}

function bodyText(rawBody: RawBody): string {
  return typeof rawBody === "string" ? rawBody : new TextDecoder().decode(rawBody);
}

export function assertRawBody(rawBody: unknown): asserts rawBody is RawBody {
  if (typeof rawBody === "string" || rawBody instanceof Uint8Array || rawBody instanceof ArrayBuffer) return;
  throw new TypeError(
    `rawBody must be the request body as received (string, Buffer, Uint8Array or ArrayBuffer), got ${rawBody === null ? "null" : typeof rawBody}. ` +
      'With Express, read it with express.raw({ type: "application/json" }) on the webhook route; ' +
      "with a fetch Request (workers, Deno, Bun), use await request.text() or await request.arrayBuffer().",
  );
}

export function assertSecret(secret: unknown): asserts secret is string {
  if (typeof secret === "string" && secret !== "") return;
  throw new TypeError("secret must be the webhook's signing secret (whsec_…), returned once by webhooks.create().");
}
