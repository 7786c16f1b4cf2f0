import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer } from "node:net";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAnswer, rawExchange } from "../testkit/raw-http.ts";
import { freePort, startMock, startPrism } from "./prism.ts";
import { SEED_NOTE } from "./dynamic.ts";

const START = fileURLToPath(new URL("./start.ts", import.meta.url));

/** `pid` and every process it started, and theirs (Linux /proc). */
function processTree(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      // The field after the parenthesised command name: state, then the parent's pid.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Exited meanwhile.
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  return tree;
}

/** The TCP ports process `pid` and its children listen on (Linux: socket inodes matched in /proc/net/tcp*). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const member of processTree(pid)) {
    for (const fd of readdirSync(`/proc/${member}/fd`)) {
      const target = (() => {
        try {
          return readlinkSync(`/proc/${member}/fd/${fd}`);
        } catch {
          return "";
        }
      })();
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    }
  }
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"].filter((file) => existsSync(file))) {
    for (const line of readFileSync(table, "utf8").trim().split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // st 0A: LISTEN; local_address is ADDR:PORT in hex; the inode is the tenth field.
      if (fields[3] === "0A" && inodes.has(fields[9]!)) ports.push(parseInt(fields[1]!.split(":")[1]!, 16));
    }
  }
  return ports.sort((a, b) => a - b);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("startMock", () => {
  it.each([
    ["static", false, "This mock (static: the documented examples)"],
    ["dynamic", true, "This mock (dynamic: the server on data of its own, kept per key)"],
  ])(
    "(%s) picks a free port, answers GET /api/v1/ once resolved, names itself in its docs, and stop() frees the port",
    async (_mode, dynamic, description) => {
      const mock = await startMock({ dynamic });
      expect(mock.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(mock.apiBase).toBe(`${mock.url}/api/v1`);

      const response = await fetch(`${mock.apiBase}/`);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        name: "Live Stream Hosting API",
        version: "v1",
        docs: `${mock.url}/docs`,
      });
      const contract = await (await fetch(`${mock.url}/docs/openapi.yaml`)).text();
      expect(contract).toContain(`servers:\n  - url: ${mock.apiBase}\n    description: '${description}'\n`);
      const markup = (await (await fetch(`${mock.url}/docs`)).text()).replace(/<script[\s\S]*?<\/script>/g, "");
      expect(markup).toContain(`>${mock.apiBase}<`);

      await mock.stop();
      await expect(fetch(`${mock.apiBase}/`)).rejects.toThrow();
      await mock.stop();
    },
  );

  it("says which port is taken", async () => {
    const blocker = createServer().listen(0, "127.0.0.1");
    await once(blocker, "listening");
    const address = blocker.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      for (const dynamic of [false, true])
        await expect(startMock({ port, dynamic })).rejects.toThrow(
          new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}`),
        );
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
    await expect(startMock({ spec: "/nonexistent/openapi.yaml" })).rejects.toThrow(
      /no OpenAPI document at \/nonexistent/,
    );
  });
});

describe("npm run mock", () => {
  it.runIf(existsSync("/proc/net/tcp"))(
    "listens on MOCK_PORT and on no other port, and stops on SIGTERM (--dynamic; --seed accepted, said to change nothing)",
    async () => {
      const port = await freePort();
      const child = spawn(process.execPath, [START, "--dynamic", "--seed", "42"], {
        env: { ...process.env, MOCK_PORT: String(port) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk));
      try {
        const deadline = Date.now() + 60_000;
        while (!output.includes("API:") && Date.now() < deadline && child.exitCode === null)
          await new Promise((resolve) => setTimeout(resolve, 50));
        expect(output).toMatch(new RegExp(`API: +http://127\\.0\\.0\\.1:${port}/api/v1`));
        expect(output).toMatch(/dynamic: the server on data of its own, kept per key until it stops/);
        expect(output).toContain(SEED_NOTE);
        expect(listeningPorts(child.pid!)).toEqual([port]);
      } finally {
        const exited = once(child, "exit");
        child.kill("SIGTERM");
        await exited;
      }
      expect(isAlive(child.pid!)).toBe(false);
      expect(output).toContain("Stopped.");
    },
    90_000,
  );

  it("refuses an argument it does not know, with its usage", async () => {
    const child = spawn(process.execPath, [START, "--cors"], {
      env: { ...process.env, MOCK_PORT: String(await freePort()) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    const [code] = await once(child, "exit");
    expect(code).toBe(2);
    expect(output).toMatch(/Unknown option '--cors'[\s\S]*Usage: npm run mock/);
  }, 60_000);
});

describe("the mock answers bad bytes as the server does (server/tests/protocol-edges.test.ts)", () => {
  it("a bodyless POST, an invalid webhook host, a missing Host, CONNECT, GET * and If-None-Match: *", async () => {
    const mock = await startMock();
    try {
      const port = Number(new URL(mock.url).port);
      const key = `svc_test_${"0".repeat(32)}`;
      const send = async (raw: string) => parseAnswer((await rawExchange(port, raw)).text);
      const envelope = (code: string) => ({ error: { code, message: expect.any(String) } });

      const bodyless = await send(
        `POST /api/v1/streams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n`,
      );
      expect([bodyless.status, bodyless.body]).toEqual([400, envelope("missing_fields")]);

      const hook = await fetch(`${mock.apiBase}/webhooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: "https://x_y.example/hook", events: ["stream.ended"] }),
      });
      expect([hook.status, await hook.json()]).toEqual([
        400,
        { error: { code: "invalid_url", message: expect.stringMatching(/not a valid host name/) } },
      ]);

      const noHost = await send("GET /api/v1/ HTTP/1.1\r\n\r\n");
      expect([noHost.status, noHost.body]).toEqual([400, envelope("invalid_fields")]);
      expect(noHost.headers.get("request-id")).toMatch(/^req_[0-9a-f]{32}$/);

      const tunnel = await send("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n");
      expect([tunnel.status, tunnel.body]).toEqual([404, envelope("not_found")]);

      const asterisk = await send("GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      expect([asterisk.status, asterisk.body]).toEqual([404, envelope("not_found")]);

      const conditional = await send(
        "GET /api/v1/ HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\nConnection: close\r\n\r\n",
      );
      expect(conditional.status).toBe(200);
      expect(conditional.body).toMatchObject({ name: "Live Stream Hosting API" });
    } finally {
      await mock.stop();
    }
  });
});
