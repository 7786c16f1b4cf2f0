/**
 * The public names of webhook-signature.ts, exported by both entries (index.ts through
 * webhooks.ts, and web.ts); its helpers stay internal to the SDK.
 */
export {
  DEFAULT_TOLERANCE_SEC,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  WebhookSignatureHeaderError,
  WebhookSignatureMismatchError,
  WebhookTimestampInFutureError,
  WebhookTimestampTooOldError,
  WebhookVerificationError,
  type RawBody,
  type SignatureHeader,
  type SignOptions,
  type VerifyOptions,
  type WebhookEvent,
  type WebhookEventType,
} from "./webhook-signature.ts";
export type { WebhookSecrets } from "./webhook-secrets.ts";
