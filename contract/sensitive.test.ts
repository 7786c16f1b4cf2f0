import { describe, expect, it } from "vitest";
import { loadBuiltContract } from "./built.ts";
import { contractSecrets, REDACTED, redactBody, redactSecretLike, sensitivePaths } from "./sensitive.ts";

describe("the contract's sensitive properties", () => {
  const secrets = contractSecrets(loadBuiltContract().operations.all);

  it("are found in the answers and bodies that carry them", () => {
    const paths = (operationId: string, status: number) => secrets.get(operationId)?.responses.get(status) ?? null;
    expect(redactBody({ webhook_id: "w", secret: "whsec_x", active: true }, paths("createWebhook", 201))).toEqual({
      webhook_id: "w",
      secret: REDACTED,
      active: true,
    });
    expect(redactBody({ stream_id: "s", viewer_token: "vt_x", ws_url: "wss://x" }, paths("createStream", 201))).toEqual(
      { stream_id: "s", viewer_token: REDACTED, ws_url: "wss://x" },
    );
    // A test-key stream has none: null stays null.
    expect(redactBody({ viewer_token: null }, paths("createStream", 201))).toEqual({ viewer_token: null });
    expect(redactBody({ key_id: "k", key: "svc_test_x" }, paths("dashboardCreateKey", 201))).toEqual({
      key_id: "k",
      key: REDACTED,
    });
    expect(redactBody({ key: "svc_test_x" }, secrets.get("adminRevokeKeyBySecret")?.request ?? null)).toEqual({
      key: REDACTED,
    });
    expect(redactBody({ email: "a@b.c", password: "p" }, secrets.get("dashboardSignIn")?.request ?? null)).toEqual({
      email: "a@b.c",
      password: REDACTED,
    });
    // An operation with nothing sensitive has no paths at all.
    expect(secrets.get("listStreams")?.responses.size).toBe(0);
    expect(secrets.get("listStreams")?.request).toBeNull();
  });

  it("are followed through arrays, allOf/oneOf branches and additional properties, without changing the value given", () => {
    const schema = {
      type: "object",
      properties: {
        items: { type: "array", items: { oneOf: [{ properties: { token: { "x-sensitive": true } } }] } },
        nested: { allOf: [{ properties: { secret: { type: "string", "x-sensitive": true } } }] },
        open: { type: "object", additionalProperties: { "x-sensitive": true } },
      },
    };
    const paths = sensitivePaths(schema);
    const value = { items: [{ token: "t", keep: 1 }], nested: { secret: "s", keep: 2 }, open: { a: "x" }, other: 3 };
    const copy = structuredClone(value);
    expect(redactBody(value, paths)).toEqual({
      items: [{ token: REDACTED, keep: 1 }],
      nested: { secret: REDACTED, keep: 2 },
      open: { a: REDACTED },
      other: 3,
    });
    expect(value).toEqual(copy);
  });

  it("a recursive schema is walked once", () => {
    const node: Record<string, unknown> = { type: "object", properties: { secret: { "x-sensitive": true } } };
    (node.properties as Record<string, unknown>).child = node;
    const paths = sensitivePaths(node);
    expect(redactBody({ secret: "a", child: { secret: "b" } }, paths)).toMatchObject({ secret: REDACTED });
  });
});

describe("redactSecretLike", () => {
  it("blanks keys and signing secrets by their prefix, and leaves key hints and other text", () => {
    const key = `svc_live_${"a1B2".repeat(8)}`;
    const secret = `whsec_${"x-_9".repeat(11)}`;
    expect(redactSecretLike(`key=${key}&secret=${secret}`)).toBe(`key=${REDACTED}&secret=${REDACTED}`);
    expect(redactSecretLike("svc_test_…8Gs8 and whsec_ alone")).toBe("svc_test_…8Gs8 and whsec_ alone");
    const plain = "nothing to see";
    expect(redactSecretLike(plain)).toBe(plain);
  });
});
