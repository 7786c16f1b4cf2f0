import { describe, expect, it } from "vitest";
import { loadBuiltContract } from "../../contract/built.ts";
import { operationValidation, RequestInvalid, type RequestParts } from "./contract-validation.ts";

const { operations } = loadBuiltContract();
const parts = (over: Partial<RequestParts>): RequestParts => ({
  params: {},
  query: {},
  headers: {},
  body: undefined,
  ...over,
});

function refusal(run: () => void): RequestInvalid {
  try {
    run();
  } catch (error) {
    if (error instanceof RequestInvalid) return error;
    throw error;
  }
  throw new Error("the request was accepted");
}

describe("validation from the contract's schemas", () => {
  it("coerces query parameters to their schema's type and fills in the contract's defaults", () => {
    const query: Record<string, unknown> = { limit: "5" };
    operationValidation(operations.byId("listStreams")).request(parts({ query }));
    expect(query).toEqual({ limit: 5, offset: 0 });
    const analytics: Record<string, unknown> = {};
    operationValidation(operations.byId("getAnalytics")).request(parts({ query: analytics }));
    expect(analytics).toEqual({ period: "7d" });
  });

  it("hands on Ajv's failures, pointing at where the value was: a missing body field, an enum, a repeated parameter", () => {
    const createWebhook = operationValidation(operations.byId("createWebhook"));
    expect(
      refusal(() => createWebhook.request(parts({ body: { events: ["stream.started"] } }))).errors[0],
    ).toMatchObject({ keyword: "required", instancePath: "/body", params: { missingProperty: "url" } });
    const analytics = operationValidation(operations.byId("getAnalytics"));
    expect(refusal(() => analytics.request(parts({ query: { period: "1y" } }))).errors[0]).toMatchObject({
      keyword: "enum",
      instancePath: "/query/period",
      params: { allowedValues: ["24h", "7d", "30d"] },
    });
    expect(refusal(() => analytics.request(parts({ query: { period: ["7d", "24h"] } }))).errors[0]).toMatchObject({
      keyword: "type",
      instancePath: "/query/period",
    });
  });

  it("checks headers by their lower-case names, and path parameters", () => {
    const endStream = operationValidation(operations.byId("endStream"));
    expect(
      refusal(() => endStream.request(parts({ params: { id: "x" }, headers: { "idempotency-key": "has space" } })))
        .errors[0]!.instancePath,
    ).toBe("/headers/idempotency-key");
    expect(refusal(() => endStream.request(parts({ params: { id: "x".repeat(37) } }))).errors[0]!.instancePath).toBe(
      "/params/id",
    );
  });

  it("says why an answer is outside the contract: an undocumented status or field", () => {
    const listCreators = operationValidation(operations.byId("listCreators"));
    expect(listCreators.response(203, {})).toBe("203 is not a status the contract documents");
    expect(listCreators.response(200, { creators: [], extra: 1 })).toMatch(/must NOT have additional properties/);
  });
});
