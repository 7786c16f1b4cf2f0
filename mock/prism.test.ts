import { createServer } from "node:net";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
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
