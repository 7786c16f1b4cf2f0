import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../domain/keys.ts";
import { availableEngines, startTestServer, type TestServer } from "../../testkit/harness.ts";
import { changingKeys, requestWindowsOf } from "./request-windows.ts";
import { revokeKey } from "./keys.ts";

describe.each(availableEngines())("request windows on %s", (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ engine });
  });
  afterAll(() => server.close());

  it("counts a usable key's requests in its brand's window, and a revoked key's nowhere", async () => {
    const windows = requestWindowsOf(server.db);
    const now = server.clock();
    const { id } = await server.brand();
    const { key, keyId } = await server.key(id);
    const before = await windows.brandCount(id, now);
    const first = await windows.findKeyCounted(hashApiKey(key), now);
    const second = await windows.findKeyCounted(hashApiKey(key), now);
    expect(first?.found.brand.id).toBe(id);
    expect(first?.count).toBe(before + 1);
    expect(second?.count).toBe(before + 2);
    expect(await windows.brandCount(id, now)).toBe(before + 2);

    await changingKeys(server.db, () => revokeKey(server.db, keyId, now));
    const revoked = await windows.findKeyCounted(hashApiKey(key), now);
    expect(revoked?.found.key.revokedAt).not.toBeNull();
    expect(revoked?.count).toBeNull();
    expect(await windows.brandCount(id, now)).toBe(before + 2);
    expect(await windows.findKeyCounted(hashApiKey("svc_test_unknown"), now)).toBeNull();
  });
});
