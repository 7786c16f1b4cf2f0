import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { httpsTransport, type Resolver } from "./webhook-transport.ts";

/** A plain-http receiver on every local address, noting each request's connection and the address it came in on. */
async function receiver(answer: (request: IncomingMessage, index: number) => "ok" | "reset" = () => "ok") {
  const requests: Array<{ connection: number; localAddress: string }> = [];
  const connections = new Map<Socket, number>();
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      requests.push({ connection: connections.get(request.socket)!, localAddress: request.socket.localAddress! });
      if (answer(request, requests.length - 1) === "reset") request.socket.resetAndDestroy();
      else response.writeHead(204).end();
    });
  });
  server.on("connection", (socket: Socket) => connections.set(socket, connections.size));
  server.listen(0, "0.0.0.0");
  await once(server, "listening");
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { port: (server.address() as AddressInfo).port, requests, connections: () => connections.size };
}

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const send = (transport: ReturnType<typeof httpsTransport>, url: string) =>
  transport.send({ url, body: '{"id":"evt_1"}', headers: { "content-type": "application/json" } });

describe("webhook transport connections", () => {
  it("keeps the connection to a receiver: five deliveries in a row use one", async () => {
    const local = await receiver();
    const transport = httpsTransport({ timeoutMs: 2_000, allowHosts: ["127.0.0.1"] });
    for (let i = 0; i < 5; i++)
      expect(await send(transport, `http://127.0.0.1:${local.port}/hooks`)).toEqual({ ok: true, status: 204 });
    expect(local.requests).toHaveLength(5);
    expect(local.connections()).toBe(1);
  });

  it("connects to the address checked for each delivery: a kept connection to the previous answer is not reused", async () => {
    const local = await receiver();
    const answers = ["127.0.0.1", "127.0.0.2", "127.0.0.1"];
    let asked = 0;
    const resolver: Resolver = async () => [{ address: answers[asked++]!, family: 4 }];
    const transport = httpsTransport({ timeoutMs: 2_000, allowHosts: ["hooks.test"], resolver });
    for (let i = 0; i < 3; i++)
      expect(await send(transport, `http://hooks.test:${local.port}/hooks`)).toEqual({ ok: true, status: 204 });
    expect(local.requests.map((request) => request.localAddress)).toEqual(answers);
    // The third delivery went back to 127.0.0.1 on the connection kept for it.
    expect(local.requests.map((request) => request.connection)).toEqual([0, 1, 0]);
  });

  it("sends again, once, on a fresh connection when the receiver resets a kept one as it is reused", async () => {
    // The second request, the first on a reused connection, is answered by a reset.
    const local = await receiver((_request, index) => (index === 1 ? "reset" : "ok"));
    const transport = httpsTransport({ timeoutMs: 2_000, allowHosts: ["127.0.0.1"] });
    const url = `http://127.0.0.1:${local.port}/hooks`;
    expect(await send(transport, url)).toEqual({ ok: true, status: 204 });
    expect(await send(transport, url)).toEqual({ ok: true, status: 204 });
    expect(local.requests.map((request) => request.connection)).toEqual([0, 0, 1]);
  });

  it("fails an attempt whose fresh connection is reset too, without sending a third time", async () => {
    const local = await receiver((_request, index) => (index === 0 ? "ok" : "reset"));
    const transport = httpsTransport({ timeoutMs: 2_000, allowHosts: ["127.0.0.1"] });
    const url = `http://127.0.0.1:${local.port}/hooks`;
    await send(transport, url);
    expect(await send(transport, url)).toMatchObject({ ok: false, status: null });
    expect(local.requests).toHaveLength(3);
  });
});

describe("webhook transport: the receiver's answer", () => {
  it("keeps the first 1 KiB of the answer as text, NUL replaced, and reads the rest away", async () => {
    const long = `{"error":"quota\u0000"}${"x".repeat(5_000)}`;
    const server = createServer((request, response) => {
      request.resume();
      request.on("end", () => response.writeHead(503, { "content-type": "application/json" }).end(long));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const transport = httpsTransport({ timeoutMs: 2_000, allowHosts: ["127.0.0.1"] });
    const outcome = await send(transport, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    expect(outcome).toMatchObject({ ok: false, status: 503, error: "HTTP 503" });
    expect(Buffer.byteLength(outcome.body!)).toBe(1024 + 2); // U+FFFD is 3 bytes where NUL was 1
    expect(outcome.body!.startsWith('{"error":"quota\uFFFD"}xxx')).toBe(true);
  });
});
