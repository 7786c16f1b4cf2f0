import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract } from "../../contract/contract.ts";
import { errorHandler } from "./error-handler.ts";
import { contractValidator } from "./validator.ts";
import { routePatternCounts } from "./validator-route-cache.ts";

/**
 * The validator's route look-up is sped up by remembering path-to-regexp's compilations
 * (validator-route-cache.ts). That works only while express-openapi-validator calls
 * `pathToRegexp` through its module at request time: if an upgrade changes this, these tests
 * fail, rather than the speed-up vanishing unnoticed.
 */
describe("the validator's route-pattern cache", () => {
  let base = "";
  let close: () => void = () => undefined;

  let patterns = 0;

  beforeAll(async () => {
    const contract = await loadContract();
    patterns = Object.keys(contract.document.paths).length;
    const app = express();
    app.use(express.json());
    app.use(contractValidator(contract));
    app.get("/api/v1/creators", (_req, res) => void res.json({ creators: [] }));
    app.use(errorHandler());
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  it("is reached by the validator on every request, and compiles each pattern once", async () => {
    const before = routePatternCounts();
    const requests = 50;
    for (let i = 0; i < requests; i++) expect((await fetch(`${base}/api/v1/creators`)).status).toBe(200);
    const after = routePatternCounts();
    // Upstream still looks each request's route up through path-to-regexp…
    expect(after.lookups - before.lookups).toBeGreaterThanOrEqual(requests);
    // …and the adapter answers those look-ups from what it compiled before, not anew.
    expect(after.compilations - before.compilations).toBeLessThanOrEqual(patterns);
    expect(after.compilations).toBeLessThanOrEqual(patterns * 2);
  });

  it("keeps the validator's answers: a parameter outside the contract is still refused", async () => {
    expect((await fetch(`${base}/api/v1/analytics?period=1y`)).status).toBe(400);
  });
});
