/**
 * The two mocks say what they are (X-Mock), the static mock's examples agree with the request
 * (deliveries and the request log paged and filtered as the server does), the preferences that
 * chose generated data before the dynamic mock kept state are answered with what to do instead,
 * and `--vertical` plays a brand of that vertical.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MOCK_HEADER } from "./app.ts";
import { type RunningMock, startMock } from "./prism.ts";

const apiKey = `svc_test_${"0".repeat(32)}`;

let staticMock: RunningMock;
let igaming: RunningMock;

beforeAll(async () => {
  [staticMock, igaming] = await Promise.all([startMock(), startMock({ dynamic: true, vertical: "igaming" })]);
}, 90_000);
afterAll(async () => {
  await Promise.all([staticMock?.stop(), igaming?.stop()]);
});

async function call(mock: RunningMock, path: string, init: RequestInit & { prefer?: string; key?: string } = {}) {
  const response = await fetch(`${mock.apiBase}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${init.key ?? apiKey}`,
      "content-type": "application/json",
      ...(init.prefer ? { prefer: init.prefer } : {}),
    },
  });
  return { status: response.status, header: response.headers.get(MOCK_HEADER), body: (await response.json()) as any };
}

describe("X-Mock", () => {
  it("is static on every answer of the static mock, dynamic on the dynamic mock's, static where it answers an example", async () => {
    expect((await call(staticMock, "/streams")).header).toBe("static");
    expect((await call(staticMock, "/nowhere")).header).toBe("static");
    expect((await call(igaming, "/streams")).header).toBe("dynamic");
    expect((await call(igaming, "/nowhere")).header).toBe("dynamic");
    const example = await call(igaming, "/streams", {
      prefer: "code=429, example=concurrency_limit",
      method: "POST",
      body: JSON.stringify({ creator_id: "avt_Qfmm3FkkaQM0", product_name: "Slots", platform: "kick" }),
    });
    expect(example).toMatchObject({ status: 429, header: "static", body: { error: { code: "concurrency_limit" } } });
    const documented = await call(igaming, "/streams", { prefer: "code=200, example=empty" });
    expect(documented).toMatchObject({ status: 200, header: "static", body: { streams: [], total: 0 } });
  });
});

describe("Prefer: dynamic= and seed=, which chose generated data before the dynamic mock kept state", () => {
  it.each([
    ["dynamic=true", "dynamic"],
    ["dynamic=false", "dynamic"],
    ["seed=abc", "seed"],
  ])("%s answers 400 invalid_fields on both mocks, saying what to do instead", async (prefer, name) => {
    for (const mock of [staticMock, igaming]) {
      const answer = await call(mock, "/streams", { prefer });
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe("invalid_fields");
      expect(answer.body.error.message).toMatch(
        new RegExp(`^Prefer: ${name}= is no longer read: .*npm run mock -- --dynamic`),
      );
    }
  });
});

describe("GET /webhooks/deliveries on the static mock", () => {
  it("pages and filters its documented deliveries as the server does", async () => {
    const all = (await call(staticMock, "/webhooks/deliveries")).body;
    expect(all).toMatchObject({ total: 2, limit: 100, offset: 0 });
    const second = (await call(staticMock, "/webhooks/deliveries?limit=1&offset=1")).body;
    expect(second).toEqual({ deliveries: [all.deliveries[1]], total: 2, limit: 1, offset: 1 });
    const other = (await call(staticMock, "/webhooks/deliveries?webhook_id=00000000-0000-4000-8000-000000000000")).body;
    expect(other).toEqual({ deliveries: [], total: 0, limit: 100, offset: 0 });
  });
});

describe("GET /requests on the static mock", () => {
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

describe("npm run mock -- --dynamic --vertical igaming", () => {
  const key = `svc_test_${"1".repeat(32)}`;
  const start = (platform: string, extra: object = {}) =>
    call(igaming, "/streams", {
      method: "POST",
      key,
      body: JSON.stringify({ creator_id: "avt_Qfmm3FkkaQM0", product_name: "Slots night", platform, ...extra }),
    });

  it("answers 403 vertical_mismatch as an igaming brand's server does, and 201 for its platforms", async () => {
    expect(await start("tiktok")).toMatchObject({
      status: 403,
      body: { error: { code: "vertical_mismatch", message: expect.stringContaining("kick, youtube or twitch") } },
    });
    expect((await start("youtube", { vertical: "live-commerce" })).body.error.code).toBe("vertical_mismatch");
    const kick = await start("kick");
    expect(kick.status).toBe(201);
    const listed = (await call(igaming, "/streams", { key })).body.streams;
    expect(listed.map((stream: { id: string }) => stream.id)).toEqual([kick.body.stream_id]);
    expect(listed[0]).toMatchObject({ vertical: "igaming", platform: "kick" });
    const analytics = (await call(igaming, "/analytics", { key })).body;
    expect(analytics.by_platform).toEqual({ kick: 1 });
  });

  it("the static mock of the default vertical, the demo brand's, takes any platform", async () => {
    const drop = await call(staticMock, "/streams", {
      method: "POST",
      body: JSON.stringify({ creator_id: "avt_Qfmm3FkkaQM0", product_name: "Drop", platform: "tiktok" }),
    });
    expect(drop.status).toBe(201);
  });
});
