/**
 * What a partner tests pagination against: the dynamic mock lists the streams a key started,
 * paged as the server pages (it is the server); and `Prefer` mistakes are answered in the API's
 * envelope.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../sdk/index.ts";
import { type RunningMock, startMock } from "./prism.ts";

const apiKey = `svc_test_${"0".repeat(32)}`;

let mock: RunningMock;

beforeAll(async () => {
  mock = await startMock({ dynamic: true });
}, 60_000);
afterAll(async () => {
  await mock?.stop();
});

describe("the dynamic mock's stream list", () => {
  it("pages through the streams the key started, newest first: listAll walks them once, the same on every walk", async () => {
    const client = createClient({
      baseUrl: mock.apiBase,
      apiKey: `svc_test_${randomBytes(16).toString("hex")}`,
      retry: { maxRetries: 0 },
    });
    const started: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { stream_id: id } = await client.streams.create({
        creator_id: "avt_Qfmm3FkkaQM0",
        product_name: `Drop ${i}`,
        platform: "youtube",
      });
      started.push(id);
      // Ended at once: a brand has 3 active streams at most.
      if (i < 11) await client.streams.end(id);
    }
    const walk = async (status?: "live" | "ended") => {
      const ids: string[] = [];
      for await (const stream of client.streams.listAll({ limit: 5, ...(status ? { status } : {}) }))
        ids.push(String(stream.id));
      return ids;
    };
    const first = await walk();
    expect(first).toEqual([...started].reverse());
    expect(await walk()).toEqual(first);
    expect(await walk("live")).toEqual([started[11]]);
    expect(await walk("ended")).toEqual(started.slice(0, 11).reverse());
    const page = await client.streams.list({ limit: 5, offset: 10 });
    expect({ total: page.total, ids: page.streams.map((stream) => stream.id) }).toEqual({
      total: 12,
      ids: [started[1], started[0]],
    });
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
  });

  it("still answers every documented code and example, and leaves preferences it does not know to the server", async () => {
    expect(await ask("code=402, example=no_minutes", create)).toMatchObject({
      status: 402,
      body: { error: { code: "no_minutes" } },
    });
    expect(await ask('example="empty"')).toMatchObject({ status: 200, body: { streams: [], total: 0 } });
    expect(await ask("return=minimal; respond-async")).toMatchObject({ status: 200, body: { limit: 20, offset: 0 } });
  });
});
