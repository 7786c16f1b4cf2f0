import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Contract as SuiteContract, loadSuiteContract, responseViolations } from "../../conformance/contract.ts";
import { loadBuiltContract } from "../../contract/built.ts";
import { componentValidator } from "../http/contract-schemas.ts";
import { operationValidation } from "../http/contract-validation.ts";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "../../testkit/harness.ts";

/** A date-time of the right shape on a day February does not have. */
const NOT_A_DATE = "2026-02-31T00:00:00Z";
/** An integer no int64 holds. */
const TOO_BIG = 2 ** 70;

let server: TestServer;
let suite: SuiteContract;
beforeAll(async () => {
  [server, suite] = await Promise.all([startTestServer(), loadSuiteContract()]);
});
afterAll(() => server?.close());

const admin = (method: string, path: string, body?: unknown) =>
  server.call(method, `/admin/v1${path}`, { key: ADMIN_TOKEN, body });

/** Whether the conformance suite takes `body` as a valid request body of `operationId`. */
function judgeAcceptsBody(operationId: string, body: unknown): boolean {
  return suite.compile(suite.operation(operationId).requestSchema!)(body);
}

describe("one meaning of valid: the server and the conformance judge", () => {
  it("refuses a date-time on a day that does not exist, as the judge does", async () => {
    const { body: brand } = await admin("POST", "/brands", { name: "Dates", vertical: "igaming", plan: "growth" });
    const key = (expiresAt: string) => ({
      brand_id: brand.brand_id,
      name: "ci",
      environment: "test",
      scopes: ["streams:read"],
      expires_at: expiresAt,
    });
    const refused = await admin("POST", "/keys", key(NOT_A_DATE));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({ code: "invalid_fields", message: expect.stringContaining("expires_at") });
    expect(judgeAcceptsBody("adminCreateKey", key(NOT_A_DATE))).toBe(false);

    const accepted = await admin("POST", "/keys", key("2026-02-28T00:00:00Z"));
    expect(accepted.status).toBe(201);
    expect(judgeAcceptsBody("adminCreateKey", key("2026-02-28T00:00:00Z"))).toBe(true);
  });

  it("refuses an integer beyond int64, as the judge does", async () => {
    const brand = (credits: number) => ({ name: "Big", vertical: "igaming", plan: "growth", credits_cents: credits });
    const refused = await admin("POST", "/brands", brand(TOO_BIG));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({ code: "invalid_fields", message: expect.stringContaining("credits_cents") });
    expect(judgeAcceptsBody("adminCreateBrand", brand(TOO_BIG))).toBe(false);
    expect((await admin("POST", "/brands", brand(2 ** 53 - 1))).status).toBe(201);
  });

  it("judges answers, whole and streamed item by item, as the conformance suite does", async () => {
    const { key } = await server.tenant();
    const answer = await server.call("GET", "/api/v1/analytics", { key });
    expect(answer.status).toBe(200);
    const { operations } = loadBuiltContract();
    const serverCheck = operationValidation(operations.byId("getAnalytics"));
    const judged = (body: unknown) =>
      responseViolations(suite.operation("getAnalytics"), { ...answer, text: JSON.stringify(body) });
    const item = {
      id: "6f1c2a52-0000-4000-8000-000000000001",
      status: "ended",
      viewer_count: 3,
      started_at: "2026-02-28T10:00:00.000Z",
      ended_at: "2026-02-28T11:00:00.000Z",
      platform: "kick",
      vertical: "igaming",
    };
    const variants: Array<[string, unknown, boolean]> = [
      ["as served", answer.body, true],
      ["a total beyond int64", { ...answer.body, total_streams: TOO_BIG }, false],
      ["a stream", { ...answer.body, streams: [item] }, true],
      ["a stream started on February 31", { ...answer.body, streams: [{ ...item, started_at: NOT_A_DATE }] }, false],
    ];
    const validateItem = componentValidator(loadBuiltContract(), "AnalyticsStream");
    for (const [what, body, valid] of variants) {
      expect(serverCheck.response(200, body) === null, `server: ${what}`).toBe(valid);
      expect(judged(body), `judge: ${what}`).toHaveLength(valid ? 0 : 1);
      for (const streamed of (body as { streams: unknown[] }).streams)
        expect(validateItem(streamed), `streamed item: ${what}`).toBe(valid);
    }
  });
});
