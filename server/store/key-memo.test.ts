import { describe, expect, it } from "vitest";
import { KeyMemo, type KeyWithBrand } from "./key-memo.ts";

const found = (name: string): KeyWithBrand => ({
  key: {
    id: name,
    brandId: "b",
    name,
    environment: "test",
    scopes: [],
    lastFour: null,
    createdAt: new Date(0),
    expiresAt: null,
    revokedAt: null,
  },
  brand: { id: "b", vertical: "live-commerce", plan: "growth", rateLimitPerMinute: 100 },
});

describe("the API key memo", () => {
  it("reads a key once, until forget()", async () => {
    const memo = new KeyMemo();
    let reads = 0;
    const read = async () => found(`read ${++reads}`);
    expect((await memo.find("h", read))!.key.id).toBe("read 1");
    expect((await memo.find("h", read))!.key.id).toBe("read 1");
    memo.forget();
    expect((await memo.find("h", read))!.key.id).toBe("read 2");
  });

  it("does not keep a read that was running when a write forgot the memo", async () => {
    const memo = new KeyMemo();
    let finish!: (value: KeyWithBrand) => void;
    const running = memo.find("h", () => new Promise((resolve) => (finish = resolve)));
    memo.forget();
    finish(found("before the write"));
    expect((await running)!.key.id).toBe("before the write");
    expect((await memo.find("h", async () => found("after the write")))!.key.id).toBe("after the write");
  });

  it("does not remember an unknown key", async () => {
    const memo = new KeyMemo();
    expect(await memo.find("h", async () => null)).toBeNull();
    expect((await memo.find("h", async () => found("created since")))!.key.id).toBe("created since");
  });
});
