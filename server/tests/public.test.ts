import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stockCreators } from "../store/creators.ts";
import { startTestServer, type TestServer } from "../testing/harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("GET /creators", () => {
  it("lists at least 12 stock creators with all nine fields, sorted by name, cacheable for 60 s", async () => {
    const response = await server.call("GET", "/api/v1/creators");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, max-age=60");
    const creators = response.body.creators;
    expect(creators.length).toBeGreaterThanOrEqual(12);
    expect(creators.length).toBe(stockCreators().length);
    for (const creator of creators) {
      expect(Object.keys(creator).sort()).toEqual(["consent", "id", "languages", "name", "personality", "photo", "status", "style", "vibe"]);
      expect(creator.id).toMatch(/^avt_[A-Za-z0-9]{12}$/);
    }
    const names = creators.map((creator: { name: string }) => creator.name);
    expect(names).toEqual([...names].sort());
  });
});

describe("GET / (discovery)", () => {
  it("names the service, version v1, the docs and every public endpoint with its scope", async () => {
    const response = await server.call("GET", "/api/v1/");
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: expect.any(String), version: "v1", status: "ok", docs: "http://localhost:8080/docs", openapi: "http://localhost:8080/docs/openapi.yaml" });
    const endpoints = Object.keys(response.body.endpoints);
    expect(endpoints).toHaveLength(10);
    expect(endpoints).toEqual(expect.arrayContaining(["GET /", "GET /creators", "POST /streams", "GET /streams", "GET /streams/{id}", "DELETE /streams/{id}", "GET /analytics", "POST /webhooks", "GET /webhooks", "DELETE /webhooks"]));
    expect(response.body.endpoints["POST /streams"]).toContain("streams:write");
    expect(JSON.stringify(response.body)).not.toContain("/brands");
  });
});

describe("unknown routes", () => {
  it("answer 404 not_found in the error shape", async () => {
    for (const [method, path] of [["GET", "/api/v1/nope"], ["PUT", "/api/v1/streams"], ["GET", "/elsewhere"]] as const) {
      const response = await server.call(method, path);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("not_found");
    }
  });
});
