/**
 * One request the contract accepts for each public operation, and the spec's endpoint index.
 * Scenarios that check a rule on "every endpoint" (401, scopes, plans, rate limits, db_error)
 * send these; an operation added to openapi.yaml without a line here fails loudly.
 */
import { randomUUID } from "node:crypto";
import type { Operation } from "./contract.ts";

export interface SampleRequest {
  method: string;
  path: string;
  body?: unknown;
}

type Build = (ids: { creatorId: string; streamId: string; webhookId: string }) => Omit<SampleRequest, "method">;

const SAMPLES: Record<string, Build> = {
  getDiscovery: () => ({ path: "/" }),
  listCreators: () => ({ path: "/creators" }),
  createStream: ({ creatorId }) => ({
    path: "/streams",
    body: { creator_id: creatorId, product_name: "Conformance trainers", platform: "youtube", duration_minutes: 30 },
  }),
  listStreams: () => ({ path: "/streams?limit=5" }),
  getStream: ({ streamId }) => ({ path: `/streams/${streamId}` }),
  endStream: ({ streamId }) => ({ path: `/streams/${streamId}` }),
  getAnalytics: () => ({ path: "/analytics?period=7d" }),
  createWebhook: () => ({
    path: "/webhooks",
    body: { url: "https://hooks.conformance.example/live", events: ["stream.started", "stream.ended"] },
  }),
  listWebhooks: () => ({ path: "/webhooks" }),
  deleteWebhook: ({ webhookId }) => ({ path: `/webhooks?id=${webhookId}` }),
  listWebhookDeliveries: ({ streamId }) => ({ path: `/webhooks/deliveries?stream_id=${streamId}` }),
  listenTestEvents: () => ({ path: "/webhooks/listen?events=stream.started" }),
  getWebhookDelivery: () => ({ path: `/webhooks/deliveries/${randomUUID()}` }),
  retryWebhookDelivery: () => ({ path: `/webhooks/deliveries/${randomUUID()}/retry` }),
  recoverWebhookDeliveries: ({ webhookId }) => ({
    path: "/webhooks/recover",
    body: { webhook_id: webhookId, since: new Date(Date.now() - 3_600_000).toISOString() },
  }),
  listRequests: () => ({ path: "/requests?status=4xx&limit=5" }),
  getRequest: () => ({ path: "/requests/req_conformance" }),
  getTestClock: () => ({ path: "/test-clock" }),
  advanceTestClock: () => ({ path: "/test-clock/advance", body: { seconds: 60 } }),
};

export function sampleRequest(
  op: Operation,
  ids: { creatorId: string; streamId?: string; webhookId?: string },
): SampleRequest {
  const build = SAMPLES[op.operationId];
  if (!build) throw new Error(`conformance/requests.ts has no sample request for ${op.operationId}; add one`);
  return { method: op.method, ...build({ streamId: randomUUID(), webhookId: randomUUID(), ...ids }) };
}

/** The endpoint index of the spec (§1), as written there: method, path, scope (null: no key). */
export const SPEC_ENDPOINT_INDEX: ReadonlyArray<{ method: string; path: string; scope: string | null }> = [
  { method: "GET", path: "/", scope: null },
  { method: "GET", path: "/creators", scope: null },
  { method: "POST", path: "/streams", scope: "streams:write" },
  { method: "GET", path: "/streams", scope: "streams:read" },
  { method: "GET", path: "/streams/{id}", scope: "streams:read" },
  { method: "DELETE", path: "/streams/{id}", scope: "streams:write" },
  { method: "GET", path: "/analytics", scope: "analytics:read" },
  { method: "POST", path: "/webhooks", scope: "webhooks:write" },
  { method: "GET", path: "/webhooks", scope: "webhooks:write" },
  { method: "DELETE", path: "/webhooks", scope: "webhooks:write" },
];

/**
 * The operations the contract adds to the spec's index, with their scopes: the partner tools of
 * `live-stream-hosting listen` and `trigger`, the request log and the test clock (DESIGN.md §6). The contract has exactly the index
 * and these; one more fails the scope scenario until it is named here.
 */
export const ADDED_ENDPOINTS: ReadonlyArray<{ method: string; path: string; scope: string | null }> = [
  { method: "GET", path: "/webhooks/listen", scope: "webhooks:write" },
  { method: "GET", path: "/webhooks/deliveries", scope: "webhooks:write" },
  { method: "GET", path: "/webhooks/deliveries/{delivery_id}", scope: "webhooks:write" },
  { method: "POST", path: "/webhooks/deliveries/{delivery_id}/retry", scope: "webhooks:write" },
  { method: "POST", path: "/webhooks/recover", scope: "webhooks:write" },
  { method: "GET", path: "/requests", scope: "logs:read" },
  { method: "GET", path: "/requests/{request_id}", scope: "logs:read" },
  { method: "GET", path: "/test-clock", scope: "streams:write" },
  { method: "POST", path: "/test-clock/advance", scope: "streams:write" },
];
