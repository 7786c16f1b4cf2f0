// `live-stream-hosting grade` against the docs' sample receiver (docs/samples/verifyWebhook.ts, in
// a process of its own, as a partner runs it): every case passes. Against receivers each broken in
// one way: the cases that fault exists for fail, and the command exits 1.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../mock/prism.ts";
import { EXIT_API_FAILURE, EXIT_OK, main } from "./cli.ts";
import { computeSignature, verifyWebhook } from "./webhooks.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const TSX = fileURLToPath(import.meta.resolve("tsx/esm"));
const SECRET = "whsec_grade-test-secret-0123456789abcdef";

async function grade(url: string, extra: string[] = []) {
  const out: string[] = [];
  const code = await main(["grade", "--url", url, "--secret", SECRET, ...extra], {
    env: {},
    out: (line) => out.push(line),
    err: (line) => out.push(line),
  });
  return { code, out };
}

const failedCases = (out: string[]) =>
  out.filter((line) => line.startsWith("FAIL")).map((line) => line.slice(6, line.indexOf(":")));

describe("grade against the docs' sample receiver", () => {
  let dir: string;
  let child: ChildProcess;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "lsh-grade-"));
    port = await freePort();
    child = spawn(process.execPath, ["--import", TSX, join(ROOT, "docs", "samples", "verifyWebhook.ts")], {
      cwd: dir,
      env: {
        ...process.env,
        PORT: String(port),
        WEBHOOK_SECRET: SECRET,
        TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.json"),
      },
      stdio: "ignore",
    });
    const deadline = Date.now() + 30_000;
    while (
      (await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "{}" }).then(
        (answer) => answer.status,
        () => 0,
      )) !== 400
    ) {
      if (Date.now() > deadline) throw new Error("the sample receiver did not start");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 40_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = once(child, "exit");
      child.kill();
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes every case and exits 0", async () => {
    const { code, out } = await grade(`http://127.0.0.1:${port}/hooks`);
    expect(failedCases(out)).toEqual([]);
    expect(out.at(-1)).toBe("12 passed, 0 failed");
    expect(code).toBe(EXIT_OK);
  }, 30_000);
});

/** A receiver that reads the whole body, then answers what `handle` says. */
async function receiver(
  handle: (body: Buffer, req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => handle(Buffer.concat(chunks), req, res));
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`, server };
}

const signatureOf = (req: IncomingMessage) => req.headers["x-service-signature"] as string | undefined;

describe("grade catches a broken receiver", () => {
  const servers: Server[] = [];
  afterAll(() => {
    for (const server of servers) server.close();
  });
  const broken = async (handle: Parameters<typeof receiver>[0]) => {
    const { url, server } = await receiver(handle);
    servers.push(server);
    return url;
  };

  it("one that skips the signature check: the forged and unsigned cases fail", async () => {
    const url = await broken((body, _req, res) => {
      JSON.parse(body.toString());
      res.writeHead(204).end();
    });
    const { code, out } = await grade(url);
    expect(code).toBe(EXIT_API_FAILURE);
    expect(failedCases(out)).toEqual([
      "tampered body",
      "wrong signature",
      "timestamp 10 minutes old",
      "timestamp 10 minutes ahead",
      "no X-Service-Signature",
    ]);
    expect(out.at(-1)).toBe("7 passed, 5 failed");
  });

  it("one that checks the digest but not the timestamp: the stale and future cases fail", async () => {
    const url = await broken((body, req, res) => {
      const match = /t=(\d+),v1=([0-9a-f]+)/.exec(signatureOf(req) ?? "");
      const valid = match !== null && computeSignature(Number(match[1]), body, SECRET) === match[2];
      res.writeHead(valid ? 204 : 400).end();
    });
    const { out } = await grade(url);
    expect(failedCases(out)).toEqual(["timestamp 10 minutes old", "timestamp 10 minutes ahead"]);
  });

  it("one without dedupe, failing on an event id it has seen: the duplicate case fails", async () => {
    const seen = new Set<string>();
    const url = await broken((body, req, res) => {
      try {
        const event = verifyWebhook(body, signatureOf(req), SECRET);
        if (seen.has(event.id)) throw new Error("duplicate key value violates unique constraint");
        seen.add(event.id);
        res.writeHead(204).end();
      } catch {
        res.writeHead(seen.size > 0 && signatureOf(req) ? 500 : 400).end();
      }
    });
    const { out } = await grade(url);
    expect(failedCases(out)).toEqual(["the same event id twice"]);
  });

  it("a slow one: the valid cases fail when it answers after the time limit", async () => {
    const url = await broken((body, req, res) => {
      let ok = true;
      try {
        verifyWebhook(body, signatureOf(req), SECRET);
      } catch {
        ok = false;
      }
      if (!ok) return void res.writeHead(400).end();
      setTimeout(() => res.writeHead(204).end(), 1_500);
    });
    const { out } = await grade(url, ["--timeout", "1"]);
    expect(failedCases(out)).toEqual([
      "valid stream.started",
      "valid stream.ended",
      "valid stream.error",
      "the same event id twice",
      "events out of order",
      "body with spaces and escapes",
      "slow-reading sender",
    ]);
    expect(out.find((line) => line.startsWith("FAIL  valid stream.started"))).toContain(
      "valid stream.started: no answer within 1 s —",
    );
  }, 30_000);

  it("one that verifies a re-serialised body: the reformatted case fails, and the hint says why", async () => {
    const url = await broken((body, req, res) => {
      try {
        verifyWebhook(JSON.stringify(JSON.parse(body.toString())), signatureOf(req), SECRET);
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
    const { code, out } = await grade(url);
    expect(code).toBe(EXIT_API_FAILURE);
    expect(failedCases(out)).toEqual(["body with spaces and escapes"]);
    expect(out).toContain(
      "Hint: compact bodies pass but a body with spaces and escapes fails: your receiver verifies a re-serialised body; verify the raw bytes as received.",
    );
  });

  it("one that verifies with another secret: says the secret does not match", async () => {
    const url = await broken((body, req, res) => {
      try {
        verifyWebhook(body, signatureOf(req), "whsec_another-secret-entirely");
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
    const { code, out } = await grade(url);
    expect(code).toBe(EXIT_API_FAILURE);
    expect(out.filter((line) => line.startsWith("Hint:"))).toEqual([
      expect.stringMatching(
        /^Hint: the secret does not match: every correctly signed delivery was refused\. Pass --secret/,
      ),
    ]);
  });

  it("nothing listening: one line for every case, and a hint", async () => {
    const url = `http://127.0.0.1:${await freePort()}/hooks`;
    const { code, out } = await grade(url);
    expect(code).toBe(EXIT_API_FAILURE);
    expect(out.filter((line) => line.includes("ECONNREFUSED"))).toEqual([
      "FAIL  12 cases (every case): connection failed (ECONNREFUSED)",
      `Hint: nothing answered at ${url} (connection failed (ECONNREFUSED)): is your receiver running, on that port and path?`,
    ]);
    expect(out.at(-1)).toBe("0 passed, 12 failed");
  });

  it("one that never answers: the cases time out at once, not one after another", async () => {
    const url = await broken(() => undefined);
    const started = Date.now();
    const { out } = await grade(url, ["--timeout", "1"]);
    // Twelve cases of up to two deliveries at 1 s each would take 20 s one after another.
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(out.filter((line) => line.startsWith("FAIL")).length).toBe(12);
    expect(out).toContain("FAIL  valid stream.started: no answer within 1 s — a valid delivery must be answered 2xx");
  }, 30_000);

  it("--json: valid JSON that is terminal-safe, with C1 and bidi characters of a graded value as JSON escapes", async () => {
    const url = `${await broken((_body, _req, res) => res.writeHead(204).end())}?q=\u0085\u009b\u202e\u007f`;
    const { out } = await grade(url, ["--json"]);
    expect(out).toHaveLength(1);
    expect(out[0]).toContain("?q=\\u0085\\u009b\\u202e\\u007f");
    expect(out[0]).not.toMatch(/[\u007f-\u009f\u202e]/);
    expect(JSON.parse(out[0]!).url).toBe(url);
  });

  it("--json: one JSON report with every case", async () => {
    const url = await broken((_body, _req, res) => res.writeHead(204).end());
    const { code, out } = await grade(url, ["--json"]);
    expect(code).toBe(EXIT_API_FAILURE);
    expect(out).toHaveLength(1);
    const report = JSON.parse(out[0]!);
    expect(report).toMatchObject({ url, timeout_seconds: 10, passed: 7, failed: 5, hints: [] });
    expect(report.cases).toHaveLength(12);
    expect(report.cases[0]).toEqual({
      name: "valid stream.started",
      expect: "accept",
      ok: true,
      answers: ["HTTP 204"],
      why: "a valid delivery must be answered 2xx",
    });
  });
});
