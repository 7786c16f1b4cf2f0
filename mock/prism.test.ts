import { createServer } from "node:net";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { parseAnswer, rawExchange } from "../server/testing/raw-http.ts";
import { startMock, startPrism } from "./prism.ts";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("startMock", () => {
  it("picks a free port, answers GET /api/v1/ once resolved, and stop() ends the Prism process and frees the port", async () => {
    const mock = await startMock();
    const pid = mock.process.pid;
    expect(pid).toBeTypeOf("number");
    expect(mock.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(mock.apiBase).toBe(`${mock.url}/api/v1`);
    expect(mock.process.spawnargs.join(" ")).toContain("node_modules/.bin/prism mock");

    const response = await fetch(`${mock.apiBase}/`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ name: "Live Stream Hosting API", version: "v1", docs: `${mock.url}/docs` });
    const contract = await (await fetch(`${mock.url}/docs/openapi.yaml`)).text();
    expect(contract).toContain(`servers:\n  - url: ${mock.apiBase}\n`);

    await mock.stop();
    expect(isAlive(pid as number)).toBe(false);
    await expect(fetch(`${mock.apiBase}/`)).rejects.toThrow();
    await mock.stop();
  });

  it("says which port is taken, and leaves no Prism behind", async () => {
    const blocker = createServer().listen(0, "127.0.0.1");
    await once(blocker, "listening");
    const address = blocker.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      await expect(startMock({ port })).rejects.toThrow(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}`));
    } finally {
      blocker.close();
    }
  });

  it("bare Prism fails with Prism's output when its port is taken", async () => {
    const blocker = createServer().listen(0, "127.0.0.1");
    await once(blocker, "listening");
    const address = blocker.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      await expect(startPrism({ port, readyTimeoutMs: 20_000 })).rejects.toThrow(/Prism/);
    } finally {
      blocker.close();
    }
  });

  it("says what to do when the OpenAPI document is missing", async () => {
    await expect(startMock({ spec: "/nonexistent/openapi.yaml" })).rejects.toThrow(/no OpenAPI document at \/nonexistent/);
  });
});

describe("the mock answers bad bytes as the server does (server/tests/protocol-edges.test.ts)", () => {
  it("a bodyless POST, an invalid webhook host, a missing Host, CONNECT, GET * and If-None-Match: *", async () => {
    const mock = await startMock();
    try {
      const port = Number(new URL(mock.url).port);
      const key = `svc_test_${"0".repeat(32)}`;
      const send = async (raw: string) => parseAnswer((await rawExchange(port, raw)).text);
      const envelope = (code: string) => ({ error: { code, message: expect.any(String) } });

      const bodyless = await send(`POST /api/v1/streams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n`);
      expect([bodyless.status, bodyless.body]).toEqual([400, envelope("missing_fields")]);

      const hook = await fetch(`${mock.apiBase}/webhooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: "https://x_y.example/hook", events: ["stream.ended"] }),
      });
      expect([hook.status, await hook.json()]).toEqual([400, { error: { code: "invalid_url", message: expect.stringMatching(/not a valid host name/) } }]);

      const noHost = await send("GET /api/v1/ HTTP/1.1\r\n\r\n");
      expect([noHost.status, noHost.body]).toEqual([400, envelope("invalid_fields")]);
      expect(noHost.headers.get("request-id")).toMatch(/^req_[0-9a-f]{32}$/);

      const tunnel = await send("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n");
      expect([tunnel.status, tunnel.body]).toEqual([404, envelope("not_found")]);

      const asterisk = await send("GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      expect([asterisk.status, asterisk.body]).toEqual([404, envelope("not_found")]);

      const conditional = await send("GET /api/v1/ HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\nConnection: close\r\n\r\n");
      expect(conditional.status).toBe(200);
      expect(conditional.body).toMatchObject({ name: "Live Stream Hosting API" });
    } finally {
      await mock.stop();
    }
  });
});
