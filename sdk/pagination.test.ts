import { describe, expect, it } from "vitest";
import { createClient, type StreamSummary } from "./client.ts";
import { NotFoundError } from "./errors.ts";
import { apiError, json, scriptedFetch } from "./test-helpers.ts";

const BASE_URL = "https://api.example.test/api/v1";

function stream(n: number): StreamSummary {
  return { id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`, status: "live", platform: "youtube" };
}

/** A server holding `items`, paging like GET /streams (limit clamped to `cap`). */
function server(items: StreamSummary[], { cap = 100 } = {}) {
  return (request: Request) => {
    const url = new URL(request.url);
    const limit = Math.min(Number(url.searchParams.get("limit") ?? 20), cap);
    const offset = Number(url.searchParams.get("offset") ?? 0);
    return json(200, { streams: items.slice(offset, offset + limit), total: items.length, limit, offset });
  };
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe("streams.listAll", () => {
  it("pages through with limit/offset across several pages, without duplicates or gaps", async () => {
    const items = Array.from({ length: 23 }, (_, i) => stream(i));
    const { fetch, requests } = scriptedFetch(server(items));
    const client = createClient({ baseUrl: BASE_URL, apiKey: "svc_test_x", fetch });

    const all = await collect(client.streams.listAll({ limit: 10 }));

    expect(all).toEqual(items);
    expect(requests.map((r) => new URL(r.url).search)).toEqual([
      "?limit=10&offset=0",
      "?limit=10&offset=10",
      "?limit=10&offset=20",
    ]);
  });

  it("keeps the status filter on every page", async () => {
    const { fetch, requests } = scriptedFetch(server(Array.from({ length: 5 }, (_, i) => stream(i))));
    const client = createClient({ baseUrl: BASE_URL, apiKey: "svc_test_x", fetch });
    await collect(client.streams.listAll({ status: "ended", limit: 2 }));
    expect(requests).toHaveLength(3);
    for (const request of requests) expect(new URL(request.url).searchParams.get("status")).toBe("ended");
  });

  it("asks for pages of 100 by default", async () => {
    const { fetch, requests } = scriptedFetch(server(Array.from({ length: 150 }, (_, i) => stream(i))));
    const client = createClient({ baseUrl: BASE_URL, apiKey: "svc_test_x", fetch });
    expect(await collect(client.streams.listAll())).toHaveLength(150);
    expect(requests.map((r) => new URL(r.url).searchParams.get("offset"))).toEqual(["0", "100"]);
  });

  it("leaves no gap when the server returns fewer items than asked for", async () => {
    const items = Array.from({ length: 7 }, (_, i) => stream(i));
    const { fetch } = scriptedFetch(server(items, { cap: 3 }));
    const client = createClient({ baseUrl: BASE_URL, apiKey: "svc_test_x", fetch });
    expect(await collect(client.streams.listAll({ limit: 5 }))).toEqual(items);
  });

  it("yields no duplicates when new streams arrive at the head while paging", async () => {
    const items = Array.from({ length: 6 }, (_, i) => stream(i));
    let calls = 0;
    const { fetch } = scriptedFetch((request) => {
      // A stream is created (newest first) after the first page was read.
      if (calls++ === 1) items.unshift(stream(99));
      return server(items)(request);
    });
    const client = createClient({ baseUrl: BASE_URL, apiKey: "svc_test_x", fetch });
    const ids = (await collect(client.streams.listAll({ limit: 2 }))).map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(Array.from({ length: 6 }, (_, i) => stream(i).id));
  });

  it("stops on an empty listing after one request", async () => {
    const { fetch, requests } = scriptedFetch(server([]));
    const client = createClient({ baseUrl: BASE_URL, apiKey: "svc_test_x", fetch });
    expect(await collect(client.streams.listAll())).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it("fetches lazily: breaking out early stops paging", async () => {
    const { fetch, requests } = scriptedFetch(server(Array.from({ length: 30 }, (_, i) => stream(i))));
    const client = createClient({ baseUrl: BASE_URL, apiKey: "svc_test_x", fetch });
    for await (const item of client.streams.listAll({ limit: 10 })) {
      if (item.id === stream(3).id) break;
    }
    expect(requests).toHaveLength(1);
  });

  it("throws the page's ApiError", async () => {
    const { fetch } = scriptedFetch(apiError(404, "not_found"));
    const client = createClient({ baseUrl: BASE_URL, apiKey: "svc_test_x", fetch });
    await expect(collect(client.streams.listAll())).rejects.toBeInstanceOf(NotFoundError);
  });
});
