// TRUST_PROXY's forms: which X-Forwarded-For entry is the client's address and which
// X-Forwarded-Proto entry gives its scheme, for no proxy and for lists of proxy addresses. An app
// with the rule alone (http/client-address.ts), asked over HTTP from 127.0.0.1, the "proxy" here;
// tests/reverse-proxy.test.ts shows the whole server behind nginx, and a client that goes around it.
import type { Server } from "node:http";
import express from "express";
import { afterAll, describe, expect, it } from "vitest";
import type { TrustProxy } from "../config.ts";
import { clientAddress, clientProtocol, trustProxies } from "../http/client-address.ts";

const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));

async function behind(trust: TrustProxy) {
  const app = express();
  trustProxies(app, trust);
  app.get("/", (req, res) => {
    res.json({ address: clientAddress(req), protocol: clientProtocol(req) });
  });
  const server = app.listen(0, "127.0.0.1");
  servers.push(server);
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as { port: number };
  return async (headers: Record<string, string>) =>
    (await fetch(`http://127.0.0.1:${port}/`, { headers })).json() as Promise<{ address: string; protocol: string }>;
}

const FORWARDED = { "x-forwarded-for": "198.51.100.66, 203.0.113.7, 10.0.0.2" };

describe("the client's address and scheme", () => {
  it("without TRUST_PROXY: the socket's peer, and no forwarded header counts", async () => {
    const seen = await behind(false);
    expect(await seen({ ...FORWARDED, "x-forwarded-proto": "https" })).toEqual({
      address: "127.0.0.1",
      protocol: "http",
    });
  });

  it("with the one proxy's address: the last X-Forwarded-For entry, and X-Forwarded-Proto's last entry", async () => {
    const seen = await behind(["127.0.0.1"]);
    expect(await seen({ ...FORWARDED, "x-forwarded-proto": "http, https" })).toEqual({
      address: "10.0.0.2",
      protocol: "https",
    });
    expect(await seen({ ...FORWARDED, "x-forwarded-proto": "https, http" })).toEqual({
      address: "10.0.0.2",
      protocol: "http",
    });
    // A proxy that sets the header rather than appending: its one entry.
    expect((await seen({ ...FORWARDED, "x-forwarded-proto": "https" })).protocol).toBe("https");
    expect(await seen({})).toEqual({ address: "127.0.0.1", protocol: "http" });
  });

  it("with two proxies' addresses: the entry two hops back, for the address and the scheme alike", async () => {
    const seen = await behind(["127.0.0.1", "10.0.0.2"]);
    expect(await seen({ ...FORWARDED, "x-forwarded-proto": "http, https, http" })).toEqual({
      address: "203.0.113.7",
      protocol: "https",
    });
    // The outer proxy set the header, the inner one passed it on: one entry for two hops.
    expect(await seen({ ...FORWARDED, "x-forwarded-proto": "https" })).toEqual({
      address: "203.0.113.7",
      protocol: "https",
    });
  });

  it("with the proxies' addresses: entries are read from the right past every trusted proxy", async () => {
    const seen = await behind(["loopback", "10.0.0.0/8"]);
    expect(await seen({ ...FORWARDED, "x-forwarded-proto": "http, https, https" })).toEqual({
      address: "203.0.113.7",
      protocol: "https",
    });
    // The peer is no trusted proxy: its headers count for nothing.
    const untrusted = await behind(["192.0.2.1"]);
    expect(await untrusted({ ...FORWARDED, "x-forwarded-proto": "https" })).toEqual({
      address: "127.0.0.1",
      protocol: "http",
    });
  });
});
