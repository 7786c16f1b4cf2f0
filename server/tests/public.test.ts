import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseYamlText } from "../../contract/load.ts";
import { rewriteServers } from "../http/served-docs.ts";
import { stockCreators } from "../store/creators.ts";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "../../testkit/harness.ts";

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
      expect(Object.keys(creator).sort()).toEqual([
        "consent",
        "id",
        "languages",
        "name",
        "personality",
        "photo",
        "status",
        "style",
        "vibe",
      ]);
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
    expect(response.body).toMatchObject({
      name: expect.any(String),
      version: "v1",
      status: "ok",
      docs: "http://localhost:8080/docs",
      openapi: "http://localhost:8080/docs/openapi.yaml",
    });
    const endpoints = Object.keys(response.body.endpoints);
    expect(endpoints).toHaveLength(19);
    expect(endpoints).toEqual(
      expect.arrayContaining([
        "GET /",
        "GET /creators",
        "POST /streams",
        "GET /streams",
        "GET /streams/{id}",
        "DELETE /streams/{id}",
        "GET /analytics",
        "POST /webhooks",
        "GET /webhooks",
        "DELETE /webhooks",
        "GET /webhooks/listen",
        "GET /webhooks/deliveries",
        "GET /webhooks/deliveries/{delivery_id}",
        "POST /webhooks/deliveries/{delivery_id}/retry",
        "POST /webhooks/recover",
        "GET /requests",
        "GET /requests/{request_id}",
        "GET /test-clock",
        "POST /test-clock/advance",
      ]),
    );
    expect(response.body.endpoints["POST /streams"]).toContain("streams:write");
    expect(JSON.stringify(response.body)).not.toContain("/brands");
  });
});

describe("unknown routes", () => {
  it("answer 404 not_found in the error shape", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/nope"],
      ["PUT", "/api/v1/streams"],
      ["GET", "/elsewhere"],
    ] as const) {
      const response = await server.call(method, path);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("not_found");
    }
  });
});

describe("the served contract and docs page", () => {
  it("name this server's base URL (PUBLIC_BASE_URL), not the local default the build names", async () => {
    const hosted = await startTestServer({ config: { publicBaseUrl: "https://sandbox.partner-api.example" } });
    try {
      const contract = await hosted.call("GET", "/docs/openapi.yaml");
      expect(contract.status).toBe(200);
      expect(contract.headers.get("content-type")).toMatch(/^application\/yaml/);
      const served = parseYamlText(contract.text) as { servers: unknown; paths: Record<string, unknown> };
      expect(served.servers).toEqual([
        { url: "https://sandbox.partner-api.example/api/v1", description: "This server", "x-internal": false },
      ]);
      expect(Object.keys(served.paths)).toContain("/streams");
      const page = await hosted.call("GET", "/docs");
      expect(page.text).toContain(
        '"servers":[{"url":"https://sandbox.partner-api.example/api/v1","description":"This server","x-internal":false}]',
      );
      expect(page.text).not.toContain('"url":"http://localhost:8080/api/v1"');
      // Before any script runs: the pre-rendered server panel names this server, and no other.
      const markup = page.text.replace(/<script[\s\S]*?<\/script>/g, "");
      expect(markup).toContain(">https://sandbox.partner-api.example/api/v1<");
      expect(markup).toContain(">This server<");
      expect(markup).not.toMatch(/localhost:8080\/api\/v1|127\.0\.0\.1:4010/);
    } finally {
      await hosted.close();
    }
  });

  it("refuses to serve a build whose servers it cannot find, rather than naming the wrong host", () => {
    const server = { url: "https://api.example.com/api/v1", description: "This server" };
    const contract =
      "openapi: 3.1.0\nservers:\n  - url: http://localhost:8080/api/v1\n    description: Local\npaths: {}\n";
    const page =
      '<div>http://localhost:8080/api/v1</div><script>"servers":[{"url":"http://localhost:8080/api/v1","description":"Local"}]</script>';
    expect(rewriteServers(page, contract, server)).toEqual({
      html: '<div>https://api.example.com/api/v1</div><script>"servers":[{"url":"https://api.example.com/api/v1","description":"This server","x-internal":false}]</script>',
      yaml: expect.stringContaining("https://api.example.com/api/v1"),
    });
    expect(() => rewriteServers(page.replace("<div>http://localhost:8080/api/v1</div>", ""), contract, server)).toThrow(
      /npm run build/,
    );
    expect(() => rewriteServers("<html>no servers</html>", contract, server)).toThrow(/npm run build/);
  });
});

describe("trailing slashes", () => {
  it("name nothing on the public and the operator API: 404 not_found, never the list", async () => {
    for (const [path, key] of [
      ["/api/v1/streams/", undefined],
      ["/admin/v1/brands/", ADMIN_TOKEN],
    ] as const) {
      const response = await server.call("GET", path, key ? { key } : {});
      expect(response.status).toBe(404);
      expect(response.body.error).toEqual({
        code: "not_found",
        message: `No such endpoint: ${path}. Paths take no trailing slash: ${path.slice(0, -1)}.`,
      });
    }
    expect((await server.call("GET", "/api/v1/")).status).toBe(200);
  });
});
