/**
 * What a partner tests pagination against: the dynamic mock lists one fixed set of streams per
 * seed, paged as the server pages, and `Prefer` mistakes are answered in the API's envelope.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type LiveStreamClient } from "../sdk/index.ts";
import { type RunningMock, startMock } from "./prism.ts";
import { MAX_STREAMS, MIN_STREAMS } from "./stream-catalogue.ts";

const apiKey = `svc_test_${"0".repeat(32)}`;
type Page = {
  streams: Array<{ id: string; status?: string; creator_id?: string | null }>;
  total: number;
  limit: number;
  offset: number;
};

let mock: RunningMock;
let client: LiveStreamClient;

beforeAll(async () => {
  mock = await startMock({ dynamic: true, seed: "42" });
  client = createClient({ baseUrl: mock.apiBase, apiKey, retry: { maxRetries: 0 } });
}, 60_000);
afterAll(async () => {
  await mock?.stop();
});

async function page(query: string, headers: Record<string, string> = {}, base = mock.apiBase): Promise<Page> {
  const response = await fetch(`${base}/streams?${query}`, {
    headers: { authorization: `Bearer ${apiKey}`, ...headers },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
}

describe("the dynamic mock's stream list", () => {
  it("has one total for a seed, on every call and every page", async () => {
    const first = await page("limit=20");
    expect(first.total).toBeGreaterThanOrEqual(MIN_STREAMS);
    expect(first.total).toBeLessThanOrEqual(MAX_STREAMS);
    for (const query of ["limit=20", "limit=7&offset=3", "limit=100&offset=0", "limit=1&offset=1000"]) {
      expect((await page(query)).total).toBe(first.total);
    }
  });

  it("answers min(limit, total - offset) streams, and pages that do not overlap and cover the set", async () => {
    const { total } = await page("limit=1");
    const seen: string[] = [];
    for (let offset = 0; offset < total + 10; offset += 7) {
      const { streams, limit } = await page(`limit=7&offset=${offset}`);
      expect(limit).toBe(7);
      expect(streams.length).toBe(Math.max(0, Math.min(7, total - offset)));
      seen.push(...streams.map((stream) => stream.id));
    }
    expect(seen.length).toBe(total);
    expect(new Set(seen).size).toBe(total);
    const whole = await page("limit=100");
    expect(whole.streams.map((stream) => stream.id)).toEqual(seen.slice(0, 100));
  });

  it("lets listAll walk the whole set once, the same on every walk", async () => {
    const walk = async () => {
      const ids: string[] = [];
      for await (const stream of client.streams.listAll({ limit: 10 })) ids.push(String(stream.id));
      return ids;
    };
    const [first, second] = [await walk(), await walk()];
    expect(first.length).toBe((await page("limit=1")).total);
    expect(new Set(first).size).toBe(first.length);
    expect(second).toEqual(first);
  });

  it("filters by status before paging: total counts the matching streams", async () => {
    const all = await page("limit=100&offset=0");
    const rest = await page("limit=100&offset=100");
    const everything = [...all.streams, ...rest.streams];
    for (const status of ["preparing", "live", "ended", "error"]) {
      const filtered = await page(`status=${status}&limit=100`);
      expect(filtered.total).toBe(everything.filter((stream) => stream.status === status).length);
      expect(filtered.streams.map((stream) => stream.id)).toEqual(
        everything.filter((stream) => stream.status === status).map((stream) => stream.id),
      );
    }
  });

  it("names only creators GET /creators lists, in the list and in a stream's detail", async () => {
    const listed = new Set((await client.creators.list()).creators.map((creator) => creator.id));
    const { streams } = await page("limit=100");
    const named = streams.map((stream) => stream.creator_id).filter((id): id is string => typeof id === "string");
    expect(named.length).toBeGreaterThan(0);
    for (const id of named) expect(listed).toContain(id);
    for (const stream of streams.slice(0, 5)) {
      const detail = await client.streams.get(stream.id);
      if (detail.creator_id !== null) expect(listed).toContain(detail.creator_id);
      expect({ status: detail.status, creator_id: detail.creator_id }).toEqual({
        status: stream.status,
        creator_id: stream.creator_id,
      });
    }
  });

  it("lists the same streams after a restart with the same seed, and others with another (also via Prefer: seed=)", async () => {
    const again = await startMock({ dynamic: true, seed: "42" });
    const other = await startMock({ dynamic: true, seed: "43" });
    try {
      const ids = async (base: string, headers: Record<string, string> = {}) =>
        (await page("limit=100", headers, base)).streams.map((stream) => stream.id);
      const mine = await ids(mock.apiBase);
      expect(await ids(again.apiBase)).toEqual(mine);
      expect(await ids(other.apiBase)).not.toEqual(mine);
      expect(await ids(mock.apiBase, { Prefer: "seed=43" })).toEqual(await ids(other.apiBase));
    } finally {
      await Promise.all([again.stop(), other.stop()]);
    }
  });

  it("starts with a seed of its own when given none, and says which", async () => {
    const unseeded = await startMock({ dynamic: true });
    try {
      expect(unseeded.seed).toMatch(/^\d+$/);
      const totals = [
        (await page("limit=5", {}, unseeded.apiBase)).total,
        (await page("limit=5", {}, unseeded.apiBase)).total,
      ];
      expect(totals[1]).toBe(totals[0]);
    } finally {
      await unseeded.stop();
    }
  });
});

describe("Prefer on the mock", () => {
  const envelope = (message: RegExp) => ({
    error: { code: "invalid_fields", message: expect.stringMatching(message) },
  });
  const ask = async (prefer: string, init: RequestInit = {}, path = "/streams") => {
    const response = await fetch(`${mock.apiBase}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", prefer },
    });
    return { status: response.status, type: response.headers.get("content-type"), body: await response.json() };
  };
  const create = {
    method: "POST",
    body: JSON.stringify({ creator_id: "avt_Qfmm3FkkaQM0", product_name: "Earbuds", platform: "youtube" }),
  };

  it("answers a code the operation does not document with 400 invalid_fields listing the documented ones", async () => {
    const answer = await ask("code=418");
    expect(answer).toEqual({
      status: 400,
      type: expect.stringMatching(/^application\/json/),
      body: envelope(/code=418 .*GET \/streams.*valid codes: 200, 401, 402, 403, 429, 500\b/),
    });
    expect((await ask("code=abc")).body).toEqual(envelope(/code=abc .*valid codes:/));
  });

  it("answers an example the response does not name with 400 invalid_fields listing the names", async () => {
    const answer = await ask("code=402, example=bogus", create);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(
      envelope(/example=bogus .*POST \/streams.*402: plan_required, insufficient_credits, no_minutes/),
    );
    expect((await ask("example=bogus")).body).toEqual(envelope(/example=bogus .*valid examples of 200: page, empty/));
    expect((await ask("dynamic=maybe")).body).toEqual(envelope(/dynamic=maybe .*true, false/));
  });

  it("still answers every documented code and example, and ignores preferences it does not know", async () => {
    expect(await ask("code=402, example=no_minutes", create)).toMatchObject({
      status: 402,
      body: { error: { code: "no_minutes" } },
    });
    expect(await ask('example="empty"')).toMatchObject({ status: 200, body: { streams: [], total: 0 } });
    expect(await ask("return=minimal; respond-async")).toMatchObject({ status: 200, body: { limit: 20, offset: 0 } });
  });
});
