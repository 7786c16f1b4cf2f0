/**
 * The mock is coherent in every mode (issue 34): a static mock asked `Prefer: dynamic=true` on one
 * request answers as the dynamic mock does (paged, filtered, stable for a seed, believable, with
 * creators GET /creators lists), `--vertical` plays a brand of that vertical, and every answer
 * says it comes from the mock (X-Mock).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamStatusValues } from "../generated/api.ts";
import { MOCK_HEADER } from "./app.ts";
import { type RunningMock, startMock } from "./prism.ts";

const apiKey = `svc_test_${"0".repeat(32)}`;
type Stream = {
  id: string;
  status: string;
  creator_id?: string | null;
  platform?: string;
  vertical?: string;
  created_at?: string;
  started_at?: string | null;
  ended_at?: string | null;
};
type Page = { streams: Stream[]; total: number; limit: number; offset: number };

let staticMock: RunningMock;
let igaming: RunningMock;

beforeAll(async () => {
  [staticMock, igaming] = await Promise.all([
    startMock(),
    startMock({ dynamic: true, seed: "7", vertical: "igaming" }),
  ]);
}, 90_000);
afterAll(async () => {
  await Promise.all([staticMock?.stop(), igaming?.stop()]);
});

async function call(mock: RunningMock, path: string, init: RequestInit & { prefer?: string } = {}) {
  const response = await fetch(`${mock.apiBase}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${apiKey}`,
      "content-type": "application/json",
      ...(init.prefer ? { prefer: init.prefer } : {}),
    },
  });
  return { status: response.status, header: response.headers.get(MOCK_HEADER), body: (await response.json()) as any };
}

const listedCreators = async (mock: RunningMock, prefer?: string) =>
  new Set(
    ((await call(mock, "/creators", prefer ? { prefer } : {})).body.creators as { id: string }[]).map(({ id }) => id),
  );

describe("Prefer: dynamic=true on a static mock", () => {
  const prefer = "dynamic=true, seed=abc";

  it("answers the same for the same seed, three calls in a row", async () => {
    const answers = await Promise.all(
      [1, 2, 3].map(() => call(staticMock, "/streams?status=live&limit=3", { prefer })),
    );
    expect(answers[0]!.status).toBe(200);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    const id = answers[0]!.body.streams[0].id;
    const details = await Promise.all([1, 2, 3].map(() => call(staticMock, `/streams/${id}`, { prefer })));
    expect(details[1]).toEqual(details[0]);
    expect(details[2]).toEqual(details[0]);
  });

  it("honours limit, offset and status, with one total", async () => {
    for (const status of streamStatusValues) {
      const page: Page = (await call(staticMock, `/streams?status=${status}&limit=3`, { prefer })).body;
      expect(page.limit).toBe(3);
      expect(page.offset).toBe(0);
      expect(page.streams.length).toBe(Math.min(3, page.total));
      for (const stream of page.streams) expect(stream.status).toBe(status);
    }
    const all: Page = (await call(staticMock, "/streams?limit=100", { prefer })).body;
    const later: Page = (await call(staticMock, "/streams?limit=5&offset=2", { prefer })).body;
    expect(later.total).toBe(all.total);
    expect(later.streams.map(({ id }) => id)).toEqual(all.streams.slice(2, 7).map(({ id }) => id));
  });

  it("lists streams newest first, with timestamps in order and in the past", async () => {
    const { streams }: Page = (await call(staticMock, "/streams?limit=100", { prefer })).body;
    const now = Date.now();
    const created = streams.map((stream) => Date.parse(stream.created_at!));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    for (const stream of streams) {
      const times = [stream.created_at, stream.started_at, stream.ended_at].filter(Boolean).map((t) => Date.parse(t!));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(Math.min(...times)).toBeGreaterThan(now - 24 * 3_600_000);
      expect(Math.max(...times)).toBeLessThanOrEqual(now);
      if (stream.status === "live") expect(stream.ended_at ?? null).toBeNull();
    }
  });

  it("names only creators GET /creators lists (with dynamic=true too), and POST /streams accepts them", async () => {
    const creators = await listedCreators(staticMock, prefer);
    expect(creators).toEqual(await listedCreators(staticMock));
    const { streams }: Page = (await call(staticMock, "/streams?limit=100", { prefer })).body;
    const named = streams.flatMap((stream) => (stream.creator_id ? [stream.creator_id] : []));
    expect(named.length).toBeGreaterThan(0);
    for (const id of named) expect(creators).toContain(id);
    const created = await call(staticMock, "/streams", {
      method: "POST",
      prefer,
      body: JSON.stringify({ creator_id: named[0], product_name: "Earbuds", platform: "youtube" }),
    });
    expect(created.status).toBe(201);
  });

  it("says how each answer was made in X-Mock", async () => {
    expect((await call(staticMock, "/streams")).header).toBe("static");
    expect((await call(staticMock, "/streams", { prefer })).header).toBe("dynamic");
    expect((await call(igaming, "/streams", { prefer: "dynamic=false" })).header).toBe("static");
    expect((await call(igaming, "/nowhere")).header).toBe("dynamic");
  });
});

describe("GET /webhooks/deliveries on the mock", () => {
  it("pages and filters its documented deliveries as the server does", async () => {
    const all = (await call(staticMock, "/webhooks/deliveries")).body;
    expect(all).toMatchObject({ total: 2, limit: 100, offset: 0 });
    const second = (await call(staticMock, "/webhooks/deliveries?limit=1&offset=1")).body;
    expect(second).toEqual({ deliveries: [all.deliveries[1]], total: 2, limit: 1, offset: 1 });
    const other = (await call(staticMock, "/webhooks/deliveries?webhook_id=00000000-0000-4000-8000-000000000000")).body;
    expect(other).toEqual({ deliveries: [], total: 0, limit: 100, offset: 0 });
  });
});

describe("GET /requests on the mock", () => {
  it("filters and pages its documented entries as the server does, newest first", async () => {
    const all = (await call(staticMock, "/requests")).body;
    expect(all.requests.map((entry: { status: number }) => entry.status)).toEqual([429, 200]);
    expect(all.has_more).toBe(false);
    const first = (await call(staticMock, "/requests?limit=1")).body;
    expect(first).toEqual({ requests: [all.requests[0]], has_more: true });
    const second = (await call(staticMock, `/requests?limit=1&starting_after=${all.requests[0].id}`)).body;
    expect(second).toEqual({ requests: [all.requests[1]], has_more: false });
    expect((await call(staticMock, "/requests?status=4xx")).body.requests).toEqual([all.requests[0]]);
    expect((await call(staticMock, "/requests?method=GET&path=/streams")).body.requests).toEqual([all.requests[1]]);
    expect((await call(staticMock, "/requests?path=/webhooks")).body.requests).toEqual([]);
    expect((await call(staticMock, "/requests?since=2026-11-20T14:03:10.000Z")).body.requests).toEqual([
      all.requests[0],
    ]);
    expect((await call(staticMock, "/requests?status=4x")).status).toBe(400);
  });

  it("names the request asked for", async () => {
    const one = await call(staticMock, "/requests/req_mine");
    expect(one.status).toBe(200);
    expect(one.body.request.request_id).toBe("req_mine");
    expect(JSON.parse(one.body.response_body)).toMatchObject({ secret: "[redacted]" });
  });
});

describe("npm run mock -- --vertical igaming", () => {
  const start = (platform: string, extra: object = {}) =>
    call(igaming, "/streams", {
      method: "POST",
      body: JSON.stringify({ creator_id: "avt_Qfmm3FkkaQM0", product_name: "Slots night", platform, ...extra }),
    });

  it("answers 403 vertical_mismatch as an igaming brand's server does, and 201 for its platforms", async () => {
    expect(await start("tiktok")).toMatchObject({
      status: 403,
      body: { error: { code: "vertical_mismatch", message: expect.stringContaining("kick, youtube or twitch") } },
    });
    expect((await start("youtube", { vertical: "live-commerce" })).body.error.code).toBe("vertical_mismatch");
    expect((await start("kick")).status).toBe(201);
    // The default, the demo brand's vertical, takes any platform.
    expect(
      (
        await call(staticMock, "/streams", {
          method: "POST",
          body: JSON.stringify({ creator_id: "avt_Qfmm3FkkaQM0", product_name: "Drop", platform: "tiktok" }),
        })
      ).status,
    ).toBe(201);
  });

  it("keeps generated streams in the vertical and on its platforms", async () => {
    const { streams }: Page = (await call(igaming, "/streams?limit=100")).body;
    expect(streams.length).toBeGreaterThan(0);
    for (const stream of streams) {
      expect(stream.vertical ?? "igaming").toBe("igaming");
      if (stream.platform !== undefined) expect(["kick", "youtube", "twitch"]).toContain(stream.platform);
    }
    const detail = (await call(igaming, `/streams/${streams[0]!.id}`)).body;
    expect(detail.vertical ?? "igaming").toBe("igaming");
    expect(["kick", "youtube", "twitch"]).toContain(detail.platform ?? "kick");
    const analytics = (await call(igaming, "/analytics")).body;
    for (const stream of analytics.streams)
      if (stream.platform) expect(["kick", "youtube", "twitch"]).toContain(stream.platform);
  });
});
