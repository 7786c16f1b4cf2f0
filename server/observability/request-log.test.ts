import { deflateRawSync } from "node:zlib";
import type { Response } from "express";
import { describe, expect, it } from "vitest";
import { loadBuiltContract } from "../../contract/built.ts";
import { lowestTimeOrderedId, TimeOrderedIds } from "../domain/time-ordered-id.ts";
import type { Queryable } from "../store/database.ts";
import { decodeBody, encodeBody } from "../store/request-log.ts";
import { cutUtf8, type DropReason, LOGGED_BODY_BYTES, RequestLogWriter, storedBody } from "./request-log.ts";

describe("cutUtf8", () => {
  it("cuts at a byte count, never inside a character", () => {
    expect(cutUtf8("short", 10)).toEqual({ text: "short", truncated: false });
    expect(cutUtf8("é".repeat(6), 11)).toEqual({ text: "é".repeat(5), truncated: true });
    expect(cutUtf8("😀".repeat(3), 7)).toEqual({ text: "😀", truncated: true });
    expect(cutUtf8("a".repeat(12), 12)).toEqual({ text: "a".repeat(12), truncated: false });
  });
});

describe("storedBody", () => {
  it("redacts by the schema, then by prefix, then cuts; text that is not JSON stays text", () => {
    const paths = { properties: new Map([["secret", { redact: true as const }]]) };
    expect(storedBody('{"secret":"whsec_abc","url":"u"}', paths)).toEqual({
      text: '{"secret":"[redacted]","url":"u"}',
      truncated: false,
    });
    const key = `svc_test_${"k".repeat(32)}`;
    expect(storedBody(`{"name":"${key}"}`, null).text).toBe('{"name":"[redacted]"}');
    expect(storedBody(`not json ${key}`, paths).text).toBe("not json [redacted]");
    expect(storedBody(undefined, null)).toEqual({ text: null, truncated: false });
    // A key across the cut: found in the 64 characters scanned past it, so no part of it is kept.
    const long = storedBody(`"${"x".repeat(LOGGED_BODY_BYTES - 5)}${key}"`, null);
    expect(long.truncated).toBe(true);
    expect(Buffer.byteLength(long.text!)).toBeLessThanOrEqual(LOGGED_BODY_BYTES);
    expect(long.text).not.toContain(key.slice(0, 20));
  });
});

describe("a body as stored", () => {
  it("is its UTF-8 behind a byte saying how: as it is when short, deflated when long; read back whole", () => {
    const short = '{"a":"é"}';
    const long = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ i, name: `item ${i}` })) });
    const storedShort = encodeBody(short)!;
    const storedLong = encodeBody(long)!;
    expect(storedShort[0]).toBe(0);
    expect(storedShort.subarray(1).toString("utf8")).toBe(short);
    expect(storedLong[0]).toBe(1);
    expect(storedLong.length).toBeLessThan(long.length / 3);
    expect(decodeBody(storedShort)).toBe(short);
    expect(decodeBody(new Uint8Array(storedLong))).toBe(long);
    // A long body after a short one keeps nothing of it (the buffer it is put in is shared).
    expect(decodeBody(encodeBody(long.slice(0, 2_000))!)).toBe(long.slice(0, 2_000));
    // Rows written with zlib's default window (before it was set to 16 KiB) read the same.
    expect(decodeBody(Buffer.concat([Buffer.of(1), deflateRawSync(long, { level: 1 })]))).toBe(long);
    expect(encodeBody(null)).toBeNull();
    expect(decodeBody(null)).toBeNull();
  });
});

describe("TimeOrderedIds", () => {
  it("sort as their times, never go back, and are UUIDv7s", () => {
    const ids = new TimeOrderedIds();
    const made = ids.next([1000, 1000, 999, 2000, 1500]);
    expect(made.map(({ ms }) => ms)).toEqual([1000, 1000, 1000, 2000, 2000]);
    const texts = made.map(({ id }) => id);
    expect([...texts].sort()).toEqual(texts);
    for (const id of texts) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(lowestTimeOrderedId(1000) <= texts[0]!).toBe(true);
    expect(lowestTimeOrderedId(1001) > texts[2]!).toBe(true);
  });
});

/** A finished public API request, as the writer reads it. */
function finished(brandId: string, status = 200): Response {
  const req = {
    method: "GET",
    originalUrl: "/api/v1/streams?limit=5",
    headers: {},
    ip: "203.0.113.9",
    socket: {},
  };
  return {
    req,
    statusCode: status,
    getHeader: () => undefined,
    locals: {
      requestId: "req_test",
      loggedKey: { keyId: "k", brandId, mode: "test", name: "key", lastFour: "abcd", at: new Date(5_000) },
      answerBody: '{"streams":[]}',
    },
  } as unknown as Response;
}

describe("RequestLogWriter", () => {
  const contract = loadBuiltContract();

  it("drops what does not fit (the queue, a brand's share) and a batch the database refuses, counts each, never throws", async () => {
    const drops: Array<[DropReason, number]> = [];
    const errors: unknown[] = [];
    let fail = true;
    const written: unknown[][] = [];
    const db: Queryable = {
      async query(_sql, params) {
        if (fail) throw new Error("database away");
        written.push(params ?? []);
        return [];
      },
    };
    const writer = new RequestLogWriter({
      db,
      contract,
      limits: { queuedEntries: 5, brandEntries: 3, batchRows: 100, flushIntervalMs: 60_000 },
      onDropped: (reason, count) => drops.push([reason, count]),
      onError: (error) => errors.push(error),
    });
    for (let i = 0; i < 4; i++) writer.record(finished("a"), 1);
    for (let i = 0; i < 3; i++) writer.record(finished("b"), 1);
    expect(writer.queued).toBe(5);
    expect(drops).toEqual([
      ["brand_share", 1],
      ["queue_full", 1],
    ]);
    await writer.flush();
    expect(drops.at(-1)).toEqual(["write_failed", 5]);
    expect(errors).toHaveLength(1);
    expect(writer.queued).toBe(0);

    fail = false;
    writer.record(finished("a", 404), 2.345);
    await writer.stop();
    expect(written).toHaveLength(1);
    // One row, its columns as arrays: the path relative to the API root, the query, the time.
    const [, , , requestIds, createdAt, , , , , paths, queries, statuses, , durations] = written[0]!;
    expect(requestIds).toEqual(["req_test"]);
    expect(createdAt).toEqual([new Date(5_000)]);
    expect(paths).toEqual(["/streams"]);
    expect(queries).toEqual(["limit=5"]);
    expect(statuses).toEqual([404]);
    expect(durations).toEqual([2.3]);
  });
});
