import { adminClient, createTenant } from "../../server/cli/admin-client.ts";
import type { CapturedResponse } from "../servers/captured.ts";
import type { RealServer } from "./targets.ts";

/** The benchmark brand: a raised request rate (by prior arrangement, as the spec allows) and room for many active streams. */
const BRAND = {
  name: "Benchmark brand",
  vertical: "live-commerce",
  plan: "growth",
  rate_limit_per_minute: 100_000_000,
  max_active_streams: 1_000,
} as const;
export const STORED_STREAMS = 20;

export interface Tenant {
  key: string;
  creatorId: string;
  streamIds: string[];
}

async function call(url: string, init: RequestInit & { token?: string; json?: unknown } = {}): Promise<Response> {
  const { token, json, ...rest } = init;
  const response = await fetch(url, {
    ...rest,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(json === undefined ? {} : { "content-type": "application/json" }),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  if (!response.ok)
    throw new Error(`${init.method ?? "GET"} ${url} answered ${response.status}: ${await response.text()}`);
  return response;
}

export function streamBody(creatorId: string): string {
  return JSON.stringify({ creator_id: creatorId, product_name: "Benchmark sneakers drop", platform: "youtube" });
}

/** Through the operator API and the public API, as an operator and a partner would: a brand, a test key, 20 streams. */
export async function prepareTenant(server: RealServer): Promise<Tenant> {
  const api = `${server.url}/api/v1`;
  const { key } = await createTenant(adminClient(`${server.url}/admin/v1`, server.adminToken), BRAND, {
    name: "benchmark",
  });
  const { creators } = (await (await call(`${api}/creators`)).json()) as { creators: Array<{ id: string }> };
  const creatorId = creators[0]!.id;
  const streamIds: string[] = [];
  for (let i = 0; i < STORED_STREAMS; i++) {
    const created = (await (
      await call(`${api}/streams`, { method: "POST", token: key, json: JSON.parse(streamBody(creatorId)) })
    ).json()) as { stream_id: string };
    streamIds.push(created.stream_id);
  }
  return { key, creatorId, streamIds };
}

/**
 * The headers a ceiling replays: the server's own (Cache-Control, Request-Id, RateLimit-*), so
 * every target puts the same bytes on the wire and the load generator, which shares the machine,
 * does the same work for each. Node writes the rest itself (Date, Content-Length, Connection,
 * Keep-Alive) and res.json the Content-Type.
 */
const REPLAYED_HEADERS = ["cache-control", "request-id", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"];

async function capture(method: string, route: string, response: Response): Promise<CapturedResponse> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { method, route, status: response.status, headers, body: await response.text() };
}

/** The real server's answers to each benchmarked operation, for the ceilings to replay byte for byte. */
export async function captureResponses(server: RealServer, tenant: Tenant): Promise<CapturedResponse[]> {
  const api = `${server.url}/api/v1`;
  const token = tenant.key;
  const created = await call(`${api}/streams`, {
    method: "POST",
    token,
    json: JSON.parse(streamBody(tenant.creatorId)),
  });
  const createdCapture = await capture("POST", "/api/v1/streams", created);
  const createdId = (JSON.parse(createdCapture.body) as { stream_id: string }).stream_id;
  return [
    await capture("GET", "/api/v1/streams", await call(`${api}/streams?limit=20`, { token })),
    await capture("GET", "/api/v1/streams/:id", await call(`${api}/streams/${tenant.streamIds[0]}`, { token })),
    await capture("GET", "/api/v1/creators", await call(`${api}/creators`)),
    createdCapture,
    await capture(
      "DELETE",
      "/api/v1/streams/:id",
      await call(`${api}/streams/${createdId}`, { method: "DELETE", token }),
    ),
  ];
}
