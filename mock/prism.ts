import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import * as nodeModule from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "node:http";
import { fileURLToPath } from "node:url";
import { ContractBuildError, loadBuiltContract } from "../contract/built.ts";
import type { Contract } from "../contract/contract.ts";
import { CONTRACT_FILE } from "../contract/files.ts";
import { API_BASE } from "../contract/operations.ts";
import { DOCS_DIR } from "../scripts/docs-paths.ts";
import { loadConfig } from "../server/config.ts";
import { createHttpServer } from "../server/http/transport.ts";
import type { Vertical } from "../server/domain/types.ts";
import { createMockApp } from "./app.ts";
import { startDynamicMock } from "./dynamic.ts";
import { loadPrismEngine, type PrismEngine } from "./prism-engine.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Prism's own entry point: spawning it directly (not via npx) makes the child's PID Prism's. */
export const PRISM_BIN = fileURLToPath(new URL("../node_modules/.bin/prism", import.meta.url));
export const DEFAULT_SPEC = CONTRACT_FILE;
export const DEFAULT_HOST = "127.0.0.1";

/** Bare Prism as its CLI starts it: the benchmark's comparison for the mock. */
export interface PrismOptions {
  /** Port to listen on; a free one is picked when omitted. */
  port?: number;
  /** Generate bodies from the schemas instead of answering the documented examples. */
  dynamic?: boolean;
  /** The OpenAPI document to mock. Default: the repository's openapi.yaml. */
  spec?: string;
  host?: string;
  /** How long to wait for Prism to answer. Default 30 000 ms. */
  readyTimeoutMs?: number;
  /** More arguments for Prism (e.g. `--seed 42`). */
  prismArgs?: string[];
}

export interface RunningPrism {
  /** Prism's origin; it serves the contract's paths bare (no `/api/v1`). */
  url: string;
  /** The Prism process, for its PID. */
  process: ChildProcess;
  /** Kills Prism and resolves once it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

export interface MockOptions {
  /** Port to listen on (the only one the mock opens); a free one is picked when omitted. */
  port?: number;
  host?: string;
  /**
   * The dynamic mock: the server on an in-memory database, state per key (mock/dynamic.ts),
   * instead of the documented examples.
   */
  dynamic?: boolean;
  /** The OpenAPI document to mock. Default: the repository's openapi.yaml (read from the build when it is current). */
  spec?: string;
  /** Where the built docs are (`npm run build`), served at /docs with this mock's URL. */
  docsDir?: string;
  /** The vertical of the brand the mock plays (default live-commerce, the demo brand's). */
  vertical?: Vertical;
  /** The dynamic mock: keys kept at once (default 100, mock/keys.ts). */
  maxKeys?: number;
}

export interface RunningMock {
  /** Origin of the mock, e.g. `http://127.0.0.1:4010`. */
  url: string;
  /** Base URL to give the SDK (`createClient({ baseUrl })`): the origin and `/api/v1`, as on the server. */
  apiBase: string;
  /** Whether it is the dynamic mock. */
  dynamic: boolean;
  /** Closes the port (and the dynamic mock's database) and resolves once it is closed. Safe to call twice. */
  stop(): Promise<void>;
}

/** The argument list for `prism`. */
export function prismArgs({
  spec,
  host,
  port,
  dynamic,
}: {
  spec: string;
  host: string;
  port: number;
  dynamic: boolean;
}): string[] {
  return ["mock", spec, "-h", host, "-p", String(port), ...(dynamic ? ["--dynamic"] : [])];
}

/**
 * The contract the mock serves: the build's copy of openapi.yaml when it is current (parsed JSON,
 * as the server reads it), else `spec` read through Redocly (loaded only then: it takes a while).
 */
async function mockedContract(spec: string): Promise<Contract> {
  if (spec === CONTRACT_FILE) {
    try {
      return loadBuiltContract();
    } catch (error) {
      if (!(error instanceof ContractBuildError)) throw error;
    }
  }
  const { loadContract } = await import("../contract/contract.ts");
  return loadContract(spec);
}

/**
 * The mock partners use, under `/api/v1` like the server, on `port` (the only port it opens).
 * Static: Prism on the contract, in this process (prism-engine.ts), behind the server's own
 * request handling (mock/app.ts); the port is opened last, so that nothing connects before there
 * is an answer. Dynamic: the server itself on an in-memory database (mock/dynamic.ts).
 */
export async function startMock({
  port,
  host = DEFAULT_HOST,
  docsDir = DOCS_DIR,
  dynamic = false,
  spec = DEFAULT_SPEC,
  vertical,
  maxKeys,
}: MockOptions = {}): Promise<RunningMock> {
  if (!existsSync(spec))
    throw new Error(`startMock: no OpenAPI document at ${spec}; pass { spec } or run from a full checkout.`);
  const contract = await mockedContract(spec);
  if (dynamic) {
    const mock = await startDynamicMock({
      contract,
      port: port ?? 0,
      host,
      docsDir,
      ...(vertical === undefined ? {} : { vertical }),
      ...(maxKeys === undefined ? {} : { maxKeys }),
    }).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      throw code === "EADDRINUSE" || code === "EACCES"
        ? new Error(`startMock: cannot listen on ${host}:${port}: ${(error as Error).message}`, { cause: error })
        : error;
    });
    return { url: mock.url, apiBase: `${mock.url}${API_BASE}`, dynamic: true, stop: mock.stop };
  }
  let prism: PrismEngine;
  try {
    prism = await loadPrismEngine({ spec: contract.dereferenced });
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND";
    throw new Error(
      missing
        ? "startMock: Prism is not installed (a development dependency); run npm ci."
        : `startMock: Prism cannot read ${spec}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  // The server's own HTTP transport, with its default time-outs: the protocol's edges (a missing
  // Host, CONNECT, a parser rejection) get the server's answers too.
  const { httpRequestTimeoutMs, httpHeadersTimeoutMs, httpKeepAliveTimeoutMs } = loadConfig({});
  const http = createHttpServer({
    requestTimeoutMs: httpRequestTimeoutMs,
    headersTimeoutMs: httpHeadersTimeoutMs,
    keepAliveTimeoutMs: httpKeepAliveTimeoutMs,
  });
  const { server } = http;
  await listen(server, port ?? 0, host);
  const address = server.address();
  const url = `http://${host}:${typeof address === "object" && address ? address.port : port}`;
  http.serve(
    createMockApp({ contract, prism, publicUrl: url, docsDir, ...(vertical === undefined ? {} : { vertical }) }),
  );
  let stopping: Promise<void> | undefined;
  return {
    url,
    apiBase: `${url}${API_BASE}`,
    dynamic: false,
    stop() {
      stopping ??= new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return stopping;
    },
  };
}

async function listen(server: Server, port: number, host: string): Promise<void> {
  try {
    server.listen(port, host);
    await Promise.race([once(server, "listening"), once(server, "error").then(([error]) => Promise.reject(error))]);
  } catch (error) {
    throw new Error(`startMock: cannot listen on ${host}:${port}: ${(error as Error).message}`);
  }
}

/** Bare Prism (startPrism, for the benchmark's comparison) needs its CLI and a document. */
function checkInstalled(spec: string): void {
  if (!existsSync(PRISM_BIN)) throw new Error(`startMock: Prism is not installed at ${PRISM_BIN}; run npm ci.`);
  if (!existsSync(spec))
    throw new Error(`startMock: no OpenAPI document at ${spec}; pass { spec } or run from a full checkout.`);
}

/**
 * Node's compile cache for Prism: the directory this process caches in (mock/start.ts switches it
 * on), else Node's default. Prism loads about 3,000 modules; compiled from the cache, it starts
 * with about a tenth less CPU (and holds 20 MB more). NODE_COMPILE_CACHE chooses the directory.
 */
function compileCacheEnv(): NodeJS.ProcessEnv {
  if (process.env.NODE_COMPILE_CACHE) return {};
  const dir = (nodeModule as { getCompileCacheDir?: () => string | undefined }).getCompileCacheDir?.();
  return { NODE_COMPILE_CACHE: dir ?? join(tmpdir(), "node-compile-cache") };
}

/** Starts bare Prism on the contract and resolves when it answers HTTP requests. */
export async function startPrism({
  port,
  dynamic = false,
  spec = DEFAULT_SPEC,
  host = DEFAULT_HOST,
  readyTimeoutMs = 30_000,
  prismArgs: extraArgs = [],
}: PrismOptions = {}): Promise<RunningPrism> {
  checkInstalled(spec);
  const chosenPort = port ?? (await freePort(host));
  // With this process's Node (the script's `#!/usr/bin/env node` would take the first on PATH).
  const child = spawn(
    process.execPath,
    [PRISM_BIN, ...prismArgs({ spec, host, port: chosenPort, dynamic }), ...extraArgs],
    {
      cwd: ROOT,
      env: { ...process.env, ...compileCacheEnv() },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
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
  return { url, process: child, stop };
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
      await new Promise((resolve) => setTimeout(resolve, 25));
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

/** A port free on `host` at the time of asking (for Prism's private port, and the tests'). */
export async function freePort(host = DEFAULT_HOST): Promise<number> {
  const server = createServer();
  server.listen(0, host);
  await once(server, "listening");
  const address = server.address();
  server.close();
  await once(server, "close");
  if (address === null || typeof address === "string") throw new Error("Could not pick a free port.");
  return address.port;
}
