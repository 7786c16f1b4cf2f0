import { afterEach, describe, expect, it, vi } from "vitest";
import { signWebhookPayload, verifyWebhook } from "./webhooks.ts";
import { signWebhookPayloadAsync, verifyWebhookAsync } from "./webhooks-async.ts";
import {
  WebhookSignatureHeaderError,
  WebhookSignatureMismatchError,
  WebhookTimestampInFutureError,
  WebhookTimestampTooOldError,
  WebhookVerificationError,
  type RawBody,
  type VerifyOptions,
} from "./webhook-signature.ts";
import type { WebhookSecrets } from "./webhook-secrets.ts";

const SECRET = "whsec_test_0123456789abcdefghijklmnopqrstuv";
const NOW_SEC = 1_790_000_000;
const now = () => NOW_SEC * 1000;
const RAW = JSON.stringify({
  id: "evt_0123456789",
  type: "stream.error",
  created_at: "2026-09-21T10:00:00.000Z",
  data: {
    stream_id: "6f1c1f3e-7c55-4b8e-9d86-0c5a8f0a2b11",
    status: "error",
    creator_id: "avt_abcdefghijkl",
    platform: "kick",
    vertical: "igaming",
  },
});
const sign = (body: RawBody, timestamp = NOW_SEC, secret = SECRET) => signWebhookPayload(body, secret, { timestamp });
const v1Of = (header: string) => header.split(",")[1]!;

interface Vector {
  body: unknown;
  header: string | undefined;
  secret?: WebhookSecrets;
  options?: VerifyOptions;
  /** The error class both must throw; absent when both must accept. */
  rejects?: new (
    ...args: never[]
  ) => Error;
}

const VECTORS: Record<string, Vector> = {
  "valid, string body": { body: RAW, header: sign(RAW) },
  "valid, Uint8Array body": { body: new TextEncoder().encode(RAW), header: sign(RAW) },
  "valid, Buffer body": { body: Buffer.from(RAW), header: sign(RAW) },
  "valid, ArrayBuffer body": { body: new TextEncoder().encode(RAW).buffer, header: sign(RAW) },
  "valid, non-ASCII body": { body: RAW.replace("kick", "kick ✓ ü"), header: sign(RAW.replace("kick", "kick ✓ ü")) },
  "valid, exactly at the tolerance": { body: RAW, header: sign(RAW, NOW_SEC - 300) },
  "valid, upper-case hex": { body: RAW, header: `t=${NOW_SEC},${v1Of(sign(RAW)).toUpperCase().replace("V1=", "v1=")}` },
  "several v1, one matches": { body: RAW, header: `t=${NOW_SEC},v1=${"0".repeat(64)},v1=nothex,${v1Of(sign(RAW))}` },
  "several v1, none matches": {
    body: RAW,
    header: `t=${NOW_SEC},v1=${"0".repeat(64)},v1=${"f".repeat(64)}`,
    rejects: WebhookSignatureMismatchError,
  },
  "tampered body": {
    body: RAW.replace('"error"', '"ended"'),
    header: sign(RAW),
    rejects: WebhookSignatureMismatchError,
  },
  "another secret": { body: RAW, header: sign(RAW, NOW_SEC, "whsec_another"), rejects: WebhookSignatureMismatchError },
  "truncated v1": { body: RAW, header: sign(RAW).slice(0, -2), rejects: WebhookSignatureMismatchError },
  "stale (301 s old)": { body: RAW, header: sign(RAW, NOW_SEC - 301), rejects: WebhookTimestampTooOldError },
  "future (301 s ahead)": { body: RAW, header: sign(RAW, NOW_SEC + 301), rejects: WebhookTimestampInFutureError },
  "stale under a 60 s tolerance": {
    body: RAW,
    header: sign(RAW, NOW_SEC - 61),
    options: { now, toleranceSec: 60 },
    rejects: WebhookTimestampTooOldError,
  },
  "stale and tampered (signature checked first)": {
    body: `${RAW} `,
    header: sign(RAW, NOW_SEC - 1000),
    rejects: WebhookSignatureMismatchError,
  },
  "no v1": { body: RAW, header: `t=${NOW_SEC}`, rejects: WebhookSignatureHeaderError },
  "only an unknown scheme": {
    body: RAW,
    header: `t=${NOW_SEC},v0=${"a".repeat(64)}`,
    rejects: WebhookSignatureHeaderError,
  },
  "no t": { body: RAW, header: v1Of(sign(RAW)), rejects: WebhookSignatureHeaderError },
  "no header": { body: RAW, header: undefined, rejects: WebhookSignatureHeaderError },
  "signed, but not JSON": { body: "not json", header: sign("not json"), rejects: WebhookVerificationError },
  "a parsed object instead of the raw body": { body: JSON.parse(RAW), header: sign(RAW), rejects: TypeError },
  "an empty secret": { body: RAW, header: sign(RAW), secret: "", rejects: TypeError },
  "two secrets, the first signed": { body: RAW, header: sign(RAW), secret: [SECRET, "whsec_other"] },
  "two secrets, the second signed": { body: RAW, header: sign(RAW), secret: ["whsec_other", SECRET] },
  "two secrets, neither signed": {
    body: RAW,
    header: sign(RAW),
    secret: ["whsec_other", "whsec_third"],
    rejects: WebhookSignatureMismatchError,
  },
  "two secrets, stale": {
    body: RAW,
    header: sign(RAW, NOW_SEC - 301),
    secret: ["whsec_other", SECRET],
    rejects: WebhookTimestampTooOldError,
  },
  "an empty array of secrets": { body: RAW, header: sign(RAW), secret: [], rejects: TypeError },
  "an array holding an empty secret": { body: RAW, header: sign(RAW), secret: [SECRET, ""], rejects: TypeError },
};

describe("verifyWebhookAsync agrees with verifyWebhook", () => {
  it.each(Object.entries(VECTORS))(
    "%s",
    async (_name, { body, header, secret = SECRET, options = { now }, rejects }) => {
      const sync = outcome(() => verifyWebhook(body as RawBody, header, secret, options));
      const async = await verifyWebhookAsync(body as RawBody, header, secret, options).then(
        (event) => ({ event }),
        (error: unknown) => ({ error }),
      );
      if (rejects) {
        expect(sync.error).toBeInstanceOf(rejects);
        expect(async).toHaveProperty("error");
        const asyncError = (async as { error: Error }).error;
        expect(asyncError.constructor).toBe((sync.error as Error).constructor);
        expect(asyncError.message).toBe((sync.error as Error).message);
      } else {
        expect(sync.error).toBeUndefined();
        expect(sync.event).toMatchObject({ id: "evt_0123456789", type: "stream.error" });
        expect(async).toEqual({ event: sync.event });
      }
    },
  );

  it("reports the same age and lead as verifyWebhook", async () => {
    const stale = await verifyWebhookAsync(RAW, sign(RAW, NOW_SEC - 400), SECRET, { now }).catch((e: unknown) => e);
    expect(stale).toMatchObject({ ageSec: 400, toleranceSec: 300 });
    const ahead = await verifyWebhookAsync(RAW, sign(RAW, NOW_SEC + 400), SECRET, { now }).catch((e: unknown) => e);
    expect(ahead).toMatchObject({ aheadSec: 400, toleranceSec: 300 });
  });

  it("rejects (never throws synchronously), so one .catch handles every failure", () => {
    const pending = verifyWebhookAsync(RAW, undefined, SECRET);
    expect(pending).toBeInstanceOf(Promise);
    return expect(pending).rejects.toBeInstanceOf(WebhookSignatureHeaderError);
  });
});

describe("signWebhookPayloadAsync", () => {
  it("produces the same header as signWebhookPayload", async () => {
    expect(await signWebhookPayloadAsync(RAW, SECRET, { timestamp: NOW_SEC })).toBe(sign(RAW));
    expect(await signWebhookPayloadAsync(new TextEncoder().encode(RAW), SECRET, { timestamp: NOW_SEC })).toBe(
      sign(RAW),
    );
  });

  it("signs with the current time by default, which both verifiers accept", async () => {
    const header = await signWebhookPayloadAsync(RAW, SECRET);
    expect(verifyWebhook(RAW, header, SECRET).id).toBe("evt_0123456789");
    expect((await verifyWebhookAsync(RAW, header, SECRET)).id).toBe("evt_0123456789");
  });
});

describe("without WebCrypto", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("says what is missing and where it exists", async () => {
    vi.stubGlobal("crypto", undefined);
    await expect(verifyWebhookAsync(RAW, sign(RAW), SECRET, { now })).rejects.toThrow(
      /needs WebCrypto \(globalThis\.crypto\.subtle\).*https:\/\/ pages.*verifyWebhook works without it/,
    );
  });
});

function outcome<T>(fn: () => T): { event?: T; error?: unknown } {
  try {
    return { event: fn() };
  } catch (error) {
    return { error };
  }
}
