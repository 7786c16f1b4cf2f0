// Numbers in query strings written every odd way, on each engine: a numeric parameter reaches SQL
// only as a clamped integer (GET /streams, which never answers 400) or is refused with the
// contract's 400 invalid_fields, never a 500. `limit=Infinity` on the dashboard's audit log and
// delivery log answered 500 db_error before.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { member } from "../../testkit/dashboard-browser.ts";
import { availableEngines, startTestServer, type TestServer } from "../../testkit/harness.ts";

const ODD_NUMBERS = [
  "Infinity",
  "-Infinity",
  "1e309",
  "9e99",
  "-1",
  "NaN",
  "0x10",
  "1.5",
  " 7",
  "1e2",
  "9".repeat(400),
];

describe.each(availableEngines())("numeric query values on %s", (engine) => {
  let server: TestServer;
  let key: string;
  let owner: Awaited<ReturnType<typeof member>>;
  let webhookId: string;
  beforeAll(async () => {
    server = await startTestServer({ engine });
    let brandId: string;
    ({ key, brandId } = await server.tenant());
    owner = await member(server, brandId, `numbers-${engine}@example.com`);
    const webhook = await server.call("POST", "/api/v1/webhooks", {
      key,
      body: { url: "https://hooks.brand.example/livestream", events: ["stream.ended"] },
    });
    webhookId = webhook.body.webhook_id;
  }, 180_000);
  afterAll(() => server?.close());

  it.each(ODD_NUMBERS)("dashboard lists refuse limit and offset %j with 400 invalid_fields", async (value) => {
    const lists = ["/audit-log", `/modes/test/webhooks/${webhookId}/deliveries`];
    for (const list of lists) {
      for (const name of ["limit", "offset"]) {
        const answer = await owner.send("GET", `${list}?${name}=${encodeURIComponent(value)}`);
        expect(answer.status, `${list}?${name}=${value}`).toBe(400);
        expect(answer.body.error.code).toBe("invalid_fields");
        expect(answer.body.error.message).toMatch(new RegExp(`Invalid field ${name}: must be`));
      }
    }
  });

  it.each(ODD_NUMBERS)("GET /api/v1/streams clamps or defaults limit and offset %j (never 400)", async (value) => {
    const answer = await server.call(
      "GET",
      `/api/v1/streams?limit=${encodeURIComponent(value)}&offset=${encodeURIComponent(value)}`,
      { key },
    );
    expect(answer.status).toBe(200);
    expect(Number.isInteger(answer.body.limit) && answer.body.limit >= 1 && answer.body.limit <= 100).toBe(true);
    expect(Number.isSafeInteger(answer.body.offset) && answer.body.offset >= 0).toBe(true);
  });

  it("plain numbers within range still work on the dashboard", async () => {
    const answer = await owner.send("GET", "/audit-log?limit=2&offset=0");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ limit: 2, offset: 0 });
  });
});
