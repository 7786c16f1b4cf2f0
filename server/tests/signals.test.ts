import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { connect, createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningProcess, runProcess, stop } from "../../testkit/server-process.ts";
import { freePort } from "../../mock/prism.ts";

const started: RunningProcess[] = [];
afterEach(async () => {
  for (const running of started.splice(0)) {
    for (const pid of descendants(running.child.pid!)) kill(pid, "SIGKILL");
    await stop(running, "SIGKILL");
  }
});

/** `npm run <script>` as an operator types it. */
function npmRun(script: string, env: Record<string, string>): RunningProcess {
  const running = runProcess("npm", ["run", script, "--silent"], env);
  started.push(running);
  return running;
}

function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    // pgrep exits 1 when there are none.
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

function commands(pids: number[]): { pid: number; ppid: number; args: string }[] {
  if (pids.length === 0) return [];
  const lines = execFileSync("ps", ["-o", "pid=,ppid=,args=", "-p", pids.join(",")], { encoding: "utf8" })
    .trim()
    .split("\n");
  return lines.map((line) => {
    const [, pid, ppid, args] = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line)!;
    return { pid: Number(pid), ppid: Number(ppid), args: args! };
  });
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function portIsFree(port: number): Promise<boolean> {
  const probe = createServer();
  probe.listen(port);
  const [event] = await Promise.race([
    once(probe, "listening").then(() => ["listening"]),
    once(probe, "error").then(() => ["error"]),
  ]);
  if (event === "listening") await new Promise((resolve) => probe.close(resolve));
  return event === "listening";
}

/** The processes of `pids` still running once they have had `graceMs` to exit. */
async function stillRunningAfter(pids: number[], graceMs: number): Promise<number[]> {
  const deadline = Date.now() + graceMs;
  while (pids.some(isRunning) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return pids.filter(isRunning);
}

/**
 * Waits until the server has received the headers of `held` requests of the key's brand: its
 * rate-limit window counts a request once its headers are in, before the body is read, so each
 * probe's RateLimit-Remaining tells how many requests were counted besides the probes.
 */
async function untilCounted(origin: string, key: string, held: number): Promise<void> {
  for (let probes = 1; probes <= 100; probes++) {
    const response = await fetch(`${origin}/api/v1/streams`, { headers: { authorization: `Bearer ${key}` } });
    await response.body?.cancel();
    const counted =
      Number(response.headers.get("ratelimit-limit")) - Number(response.headers.get("ratelimit-remaining"));
    if (counted - probes >= held) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server never counted ${held} held request(s)`);
}

describe("npm start stops gracefully", () => {
  it("on SIGTERM to npm: a request in flight gets its answer, the process tree exits 0, the port is free", async () => {
    const server = npmRun("start", { PORT: "0", DATABASE_URL: "memory:" });
    const [, port] = await server.waitFor(/API: {2}http:\/\/localhost:(\d+)\/api\/v1/);
    const [key] = await server.waitFor(/svc_test_[0-9A-Za-z]{32}/);
    // npm may run a helper of its own for a moment; what matters is that the server is its own child.
    const tree = commands(descendants(server.child.pid!));
    const node = tree.find(({ args }) => args.includes("server/main.ts"))?.pid;
    expect(tree.find(({ pid }) => pid === node)?.ppid, JSON.stringify(tree)).toBe(server.child.pid);
    expect(
      tree.filter(({ args }) => args.includes("server/main.ts")),
      JSON.stringify(tree),
    ).toHaveLength(1);
    // Plain node on the TypeScript source (type stripping): no loader, no compiler, nothing built at start.
    expect(tree.find(({ pid }) => pid === node)?.args).toMatch(/^\S*node server\/main\.ts$/);

    // untilCounted reads the brand's window: keep the minute from rolling over while it does.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 15_000) await new Promise((resolve) => setTimeout(resolve, left + 250));
    // A body announced in full and sent in two halves: the request is in flight until the second.
    const body = JSON.stringify({ url: "https://hooks.example.com/in-flight", events: ["stream.started"] });
    const socket = connect(Number(port), "127.0.0.1");
    await once(socket, "connect");
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString()));
    socket.write(
      `POST /api/v1/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await untilCounted(`http://127.0.0.1:${port}`, key!, 1);

    process.kill(server.child.pid!, "SIGTERM");
    await server.waitFor(/SIGTERM: stopping\. Waiting for 1 request\(s\) in flight/);
    socket.end(body.slice(10));
    await once(socket, "close");
    expect(answer).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({
      url: "https://hooks.example.com/in-flight",
    });

    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stdout()).toMatch(
      /requests: 1 answered while stopping; port \d+ closed[\s\S]*database: closed[\s\S]*Stopped\./,
    );
    expect(server.stdout()).toMatch(/lifecycle sweeper: stopped/);
    expect(server.stdout()).toMatch(/webhook delivery worker: stopped/);
    // The in-flight request's log line (written in batches) is out before the last line.
    const requestId = /\r\nrequest-id: (\S+)\r\n/i.exec(answer)?.[1];
    const logged = server.stdout().indexOf(`"request_id":"${requestId}"`);
    expect(requestId && logged, server.stdout()).toBeGreaterThan(0);
    expect(logged).toBeLessThan(server.stdout().lastIndexOf("Stopped."));
    expect(isRunning(node!)).toBe(false);
    expect(await portIsFree(Number(port))).toBe(true);
  }, 120_000);

  it("on SIGINT to the node process under npm: exits 0, and so does npm", async () => {
    const server = npmRun("start", { PORT: "0", DATABASE_URL: "memory:" });
    const [, port] = await server.waitFor(/API: {2}http:\/\/localhost:(\d+)\/api\/v1/);
    const node = commands(descendants(server.child.pid!)).find(({ args }) => args.includes("server/main.ts"))!.pid;
    process.kill(node, "SIGINT");
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stdout()).toMatch(/SIGINT: stopping[\s\S]*Stopped\./);
    expect(await portIsFree(Number(port))).toBe(true);
  }, 120_000);
});

describe("npm run mock stops gracefully", () => {
  it("on SIGTERM to npm: the mock stops, the process tree exits 0, the port is free", async () => {
    const port = await freePort();
    const mock = npmRun("mock", { MOCK_PORT: String(port) });
    await mock.waitFor(/API: {2}http:\/\/127\.0\.0\.1:\d+\/api\/v1/);
    const tree = descendants(mock.child.pid!);
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/creators`)).status).toBe(200);

    process.kill(mock.child.pid!, "SIGTERM");
    expect(await mock.exited).toEqual({ code: 0, signal: null });
    expect(mock.stdout()).toMatch(/SIGTERM: stopping the mock\.\s+Stopped\./);
    expect(await stillRunningAfter(tree, 5_000)).toEqual([]);
    expect(await portIsFree(port)).toBe(true);
  }, 120_000);
});
