import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Prism's own entry point: spawning it directly (not via npx) makes the child's PID Prism's. */
export const PRISM_BIN = fileURLToPath(new URL("../node_modules/.bin/prism", import.meta.url));
export const DEFAULT_SPEC = fileURLToPath(new URL("../openapi.yaml", import.meta.url));
export const DEFAULT_HOST = "127.0.0.1";

export interface MockOptions {
  /** Port to listen on; a free one is picked when omitted. */
  port?: number;
  /** Generate bodies from the schemas instead of answering the documented examples. */
  dynamic?: boolean;
  /** The OpenAPI document to mock. Default: the repository's openapi.yaml. */
  spec?: string;
  host?: string;
  /** How long to wait for Prism to answer. Default 30 000 ms. */
  readyTimeoutMs?: number;
}

export interface RunningMock {
  /** Origin of the mock, e.g. `http://127.0.0.1:4010`. */
  url: string;
  /** Base URL to give the SDK (`createClient({ baseUrl })`). */
  apiBase: string;
  /** The Prism process, for its PID. */
  process: ChildProcess;
  /** Kills Prism and resolves once it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

/** The argument list for `prism`, shared by `npm run mock` and `startMock`. */
export function prismArgs({ spec, host, port, dynamic }: { spec: string; host: string; port: number; dynamic: boolean }): string[] {
  return ["mock", spec, "-h", host, "-p", String(port), ...(dynamic ? ["--dynamic"] : [])];
}

/** Starts Prism on the contract and resolves when it answers HTTP requests. */
export async function startMock({
  port,
  dynamic = false,
  spec = DEFAULT_SPEC,
  host = DEFAULT_HOST,
  readyTimeoutMs = 30_000,
}: MockOptions = {}): Promise<RunningMock> {
  if (!existsSync(PRISM_BIN)) throw new Error(`startMock: Prism is not installed at ${PRISM_BIN}; run npm ci.`);
  if (!existsSync(spec)) throw new Error(`startMock: no OpenAPI document at ${spec}; pass { spec } or run from a full checkout.`);
  const chosenPort = port ?? (await freePort(host));
  const child = spawn(PRISM_BIN, prismArgs({ spec, host, port: chosenPort, dynamic }), {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const remember = (chunk: Buffer) => output.push(chunk.toString()) > 200 && output.shift();
  child.stdout?.on("data", remember);
  child.stderr?.on("data", remember);

  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const stop = async () => {
    process.removeListener("exit", killOnExit);
    await terminate(child);
  };

  const url = `http://${host}:${chosenPort}`;
  try {
    await waitUntilAnswering(url, child, readyTimeoutMs);
  } catch (error) {
    await stop();
    const log = output.join("").trim().split("\n").slice(-20).join("\n");
    throw new Error(`${(error as Error).message}\nPrism output:\n${log || "(none)"}`);
  }
  return { url, apiBase: url, process: child, stop };
}

async function waitUntilAnswering(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`Prism exited (${child.exitCode ?? child.signalCode}) before answering on ${url}.`);
    }
    try {
      const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(1_000) });
      await response.body?.cancel();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`Prism did not answer on ${url} within ${timeoutMs} ms.`);
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
export async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

async function freePort(host: string): Promise<number> {
  const server = createServer();
  server.listen(0, host);
  await once(server, "listening");
  const address = server.address();
  server.close();
  await once(server, "close");
  if (address === null || typeof address === "string") throw new Error("Could not pick a free port.");
  return address.port;
}
