import { describe, expect, it } from "vitest";
import {
  signWebhookPayload,
  verifyWebhook,
  WebhookSignatureHeaderError,
  WebhookSignatureMismatchError,
  WebhookTimestampInFutureError,
  WebhookTimestampTooOldError,
  WebhookVerificationError,
} from "./webhooks.ts";

const SECRET = "whsec_test_0123456789abcdefghijklmnopqrstuv";
const NOW_SEC = 1_790_000_000;
const now = () => NOW_SEC * 1000;
// As the server writes it: compact JSON. Receivers must verify these exact bytes.
const RAW = JSON.stringify({
  id: "evt_0123456789",
  type: "stream.started",
  created_at: "2026-09-21T10:00:00.000Z",
  data: {
    stream_id: "6f1c1f3e-7c55-4b8e-9d86-0c5a8f0a2b11",
    status: "live",
    creator_id: "avt_abcdefghijkl",
    platform: "youtube",
    vertical: "live-commerce",
  },
});

describe("verifyWebhook", () => {
  it("accepts a valid signature and returns the parsed event", () => {
    const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC });
    const event = verifyWebhook(RAW, header, SECRET, { now });
    expect(event.id).toBe("evt_0123456789");
    expect(event.type).toBe("stream.started");
    expect(event.data.status).toBe("live");
  });

  it("accepts the raw body as a Buffer", () => {
    const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC });
    expect(verifyWebhook(Buffer.from(RAW), header, SECRET, { now }).id).toBe("evt_0123456789");
  });

  it("accepts a header where one of several v1 values matches", () => {
    const valid = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC }).split(",")[1];
    const header = `t=${NOW_SEC},v1=${"0".repeat(64)},${valid},v1=nothex`;
    expect(verifyWebhook(RAW, header, SECRET, { now }).id).toBe("evt_0123456789");
  });

  it("accepts a timestamp exactly at the tolerance", () => {
    const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC - 300 });
    expect(verifyWebhook(RAW, header, SECRET, { now }).id).toBe("evt_0123456789");
  });

  it("ignores unknown schemes and whitespace around items", () => {
    const v1 = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC }).split(",")[1];
    const header = ` t=${NOW_SEC} , v0=abc, ${v1} `;
    expect(verifyWebhook(RAW, header, SECRET, { now }).id).toBe("evt_0123456789");
  });

  it("rejects a tampered body with WebhookSignatureMismatchError", () => {
    const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC });
    const tampered = RAW.replace('"live"', '"ended"');
    expect(() => verifyWebhook(tampered, header, SECRET, { now })).toThrow(WebhookSignatureMismatchError);
  });

  it("rejects a signature made with another secret with WebhookSignatureMismatchError", () => {
    const header = signWebhookPayload(RAW, "whsec_another_secret", { timestamp: NOW_SEC });
    expect(() => verifyWebhook(RAW, header, SECRET, { now })).toThrow(WebhookSignatureMismatchError);
  });

  it("rejects a re-serialised body and hints at passing the raw body", () => {
    const raw = '{ "id": "evt_1", "type": "stream.ended",\n  "created_at": "2026-09-21T10:00:00.000Z", "data": {} }';
    const header = signWebhookPayload(raw, SECRET, { timestamp: NOW_SEC });
    const reserialised = JSON.stringify(JSON.parse(raw));
    expect(reserialised).not.toBe(raw);
    expect(() => verifyWebhook(reserialised, header, SECRET, { now })).toThrow(WebhookSignatureMismatchError);
    expect(() => verifyWebhook(reserialised, header, SECRET, { now })).toThrow(
      "Are you passing the raw request body, exactly as received?",
    );
  });

  it("rejects a timestamp 301 s old with WebhookTimestampTooOldError", () => {
    const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC - 301 });
    const error = catchError(() => verifyWebhook(RAW, header, SECRET, { now }));
    expect(error).toBeInstanceOf(WebhookTimestampTooOldError);
    expect(error).toMatchObject({ ageSec: 301, toleranceSec: 300 });
  });

  it("rejects a timestamp 301 s in the future with WebhookTimestampInFutureError", () => {
    const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC + 301 });
    const error = catchError(() => verifyWebhook(RAW, header, SECRET, { now }));
    expect(error).toBeInstanceOf(WebhookTimestampInFutureError);
    expect(error).toMatchObject({ aheadSec: 301, toleranceSec: 300 });
  });

  it("honours a custom tolerance", () => {
    const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC - 61 });
    expect(() => verifyWebhook(RAW, header, SECRET, { now, toleranceSec: 60 })).toThrow(WebhookTimestampTooOldError);
  });

  it("rejects a header with no v1 with WebhookSignatureHeaderError", () => {
    expect(() => verifyWebhook(RAW, `t=${NOW_SEC}`, SECRET, { now })).toThrow(WebhookSignatureHeaderError);
    expect(() => verifyWebhook(RAW, `t=${NOW_SEC},v0=abcd`, SECRET, { now })).toThrow(/no v1=<hex>/);
  });

  it("rejects a header with no t with WebhookSignatureHeaderError", () => {
    const v1 = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC }).split(",")[1];
    expect(() => verifyWebhook(RAW, `${v1}`, SECRET, { now })).toThrow(WebhookSignatureHeaderError);
    expect(() => verifyWebhook(RAW, `t=soon,${v1}`, SECRET, { now })).toThrow(/no valid t=/);
  });

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["garbage", "not a signature"],
    ["semicolon-separated", `t=${NOW_SEC};v1=${"a".repeat(64)}`],
  ])("rejects a %s header with WebhookSignatureHeaderError", (_name, header) => {
    expect(() => verifyWebhook(RAW, header, SECRET, { now })).toThrow(WebhookSignatureHeaderError);
  });

  it("makes every rejection a WebhookVerificationError", () => {
    const stale = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC - 1000 });
    for (const header of [undefined, "t=1", stale, `t=${NOW_SEC},v1=00`]) {
      expect(() => verifyWebhook(RAW, header, SECRET, { now })).toThrow(WebhookVerificationError);
    }
  });

  it("verifies before parsing, so an unsigned non-JSON body is a signature error", () => {
    const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC });
    expect(() => verifyWebhook("not json", header, SECRET, { now })).toThrow(WebhookSignatureMismatchError);
  });

  it("throws a usage error when given a parsed object instead of the raw body", () => {
    const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC });
    const parsed = JSON.parse(RAW) as unknown as string;
    expect(() => verifyWebhook(parsed, header, SECRET, { now })).toThrow(/express\.raw/);
  });

  it("throws a usage error when the secret is empty", () => {
    expect(() => verifyWebhook(RAW, `t=${NOW_SEC},v1=00`, "", { now })).toThrow(/signing secret/);
  });

  describe("with several secrets (a rotation)", () => {
    const OLD = "whsec_old_0123456789abcdefghijklmnopqrstu";
    const NEW = "whsec_new_0123456789abcdefghijklmnopqrstu";

    it("accepts a delivery signed with either secret, whichever comes first", () => {
      for (const signer of [OLD, NEW]) {
        const header = signWebhookPayload(RAW, signer, { timestamp: NOW_SEC });
        expect(verifyWebhook(RAW, header, [NEW, OLD], { now }).id).toBe("evt_0123456789");
        expect(verifyWebhook(RAW, header, [OLD, NEW], { now }).id).toBe("evt_0123456789");
      }
    });

    it("rejects a delivery signed with neither, and a tampered body, with WebhookSignatureMismatchError", () => {
      const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC });
      expect(() => verifyWebhook(RAW, header, [NEW, OLD], { now })).toThrow(WebhookSignatureMismatchError);
      const signed = signWebhookPayload(RAW, OLD, { timestamp: NOW_SEC });
      expect(() => verifyWebhook(RAW.replace('"live"', '"ended"'), signed, [NEW, OLD], { now })).toThrow(
        WebhookSignatureMismatchError,
      );
    });

    it("still checks the timestamp of a delivery the second secret signed", () => {
      const header = signWebhookPayload(RAW, OLD, { timestamp: NOW_SEC - 301 });
      expect(() => verifyWebhook(RAW, header, [NEW, OLD], { now })).toThrow(WebhookTimestampTooOldError);
    });

    it("throws a usage error for an empty array, saying to pass at least one secret", () => {
      const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC });
      expect(() => verifyWebhook(RAW, header, [], { now })).toThrow(TypeError);
      expect(() => verifyWebhook(RAW, header, [], { now })).toThrow(
        /empty array: pass at least one signing secret.*\[newSecret, oldSecret\]/,
      );
    });

    it("throws a usage error naming the entry that is not a secret", () => {
      const header = signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC });
      expect(() => verifyWebhook(RAW, header, [SECRET, ""], { now })).toThrow(
        /secret\[1\] must be a signing secret.*empty string/,
      );
      expect(() => verifyWebhook(RAW, header, [SECRET, undefined] as unknown as string[], { now })).toThrow(
        /secret\[1\].*undefined/,
      );
      expect(() => verifyWebhook(RAW, header, { secret: SECRET } as unknown as string, { now })).toThrow(
        /or an array of them, got object/,
      );
    });
  });
});

describe("signWebhookPayload", () => {
  it("produces t=<seconds>,v1=<64 lowercase hex>", () => {
    expect(signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC })).toMatch(
      new RegExp(`^t=${NOW_SEC},v1=[0-9a-f]{64}$`),
    );
  });

  it("defaults the timestamp to now", () => {
    const header = signWebhookPayload(RAW, SECRET);
    expect(verifyWebhook(RAW, header, SECRET).id).toBe("evt_0123456789");
  });

  it("matches an independently computed HMAC-SHA256 of `${t}.${body}`", async () => {
    const { createHmac } = await import("node:crypto");
    const digest = createHmac("sha256", SECRET).update(`${NOW_SEC}.${RAW}`).digest("hex");
    expect(signWebhookPayload(RAW, SECRET, { timestamp: NOW_SEC })).toBe(`t=${NOW_SEC},v1=${digest}`);
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}
