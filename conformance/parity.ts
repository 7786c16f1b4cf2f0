/**
 * Where the mock and the server answer the same request differently. Two sources of pairs: the
 * contract scenarios (run on both, paired request by request) and probes, requests a client might
 * send while developing against the mock: bad input, unknown ids, missing keys. A difference is
 * reported, not failed: the mock keeps no state and validates on its own terms, and an integrator
 * should know where it will not behave like production.
 */
import { randomUUID } from "node:crypto";
import { type Exchange, type Request, createSender, requestLine } from "./client.ts";
import type { Contract } from "./contract.ts";
import type { ScenarioResult } from "./scenario.ts";
import type { Target } from "./target.ts";

export interface ParityPair {
  source: string;
  request: string;
  mock: Exchange;
  server: Exchange;
}

export interface ParityDifference {
  source: string;
  request: string;
  mock: string;
  server: string;
}

const CREATOR = "avt_Qfmm3FkkaQM0";
/** A well-formed stream id that no stream has. */
export const PROBE_ID = randomUUID();

/** Each probe is stateless: the same bytes go to both targets, each with its own test key. */
export const PROBES: ReadonlyArray<Omit<Request, "key"> & { anonymous?: boolean }> = [
  { method: "GET", path: "/streams?limit=abc" },
  { method: "GET", path: "/streams?limit=0&offset=-1" },
  { method: "GET", path: "/streams?limit=1000" },
  { method: "GET", path: "/streams?status=paused" },
  { method: "GET", path: `/streams/${PROBE_ID}` },
  { method: "GET", path: "/streams/not-a-uuid" },
  { method: "DELETE", path: `/streams/${PROBE_ID}` },
  { method: "DELETE", path: "/streams/not-a-uuid" },
  { method: "DELETE", path: "/webhooks" },
  { method: "DELETE", path: "/webhooks?id=not-a-uuid" },
  { method: "GET", path: "/analytics?period=1y" },
  { method: "GET", path: "/analytics?stream_id=not-a-uuid" },
  { method: "POST", path: "/streams", rawBody: "{not json" },
  { method: "POST", path: "/streams", body: {} },
  { method: "POST", path: "/streams", body: { creator_id: CREATOR, product_name: "Probe", platform: "youtube" } },
  {
    method: "POST",
    path: "/streams",
    body: { creator_id: CREATOR, product_name: "Probe", platform: "youtube", duration_minutes: 481 },
  },
  {
    method: "POST",
    path: "/streams",
    body: { creator_id: CREATOR, product_name: "Probe", platform: "youtube", colour: "red" },
  },
  {
    method: "POST",
    path: "/streams",
    body: { creator_id: "avt_ZxZxZxZxZxZx", product_name: "Probe", platform: "youtube" },
  },
  {
    method: "POST",
    path: "/streams",
    body: { creator_id: CREATOR, product_name: "Probe", platform: "youtube" },
    headers: { "idempotency-key": "k".repeat(256) },
  },
  {
    method: "POST",
    path: "/streams",
    body: { creator_id: CREATOR, product_name: "Probe", platform: "youtube" },
    headers: { "idempotency-key": "probe-key" },
  },
  { method: "POST", path: "/webhooks", body: { url: "http://hooks.example.com/x", events: ["stream.started"] } },
  { method: "POST", path: "/webhooks", body: { url: "https://a..b/x", events: ["stream.started"] } },
  { method: "POST", path: "/webhooks", body: { url: "https://-bad-.example/x", events: ["stream.started"] } },
  { method: "POST", path: "/webhooks", body: { url: "https://x_y.example/x", events: ["stream.started"] } },
  { method: "POST", path: "/webhooks", body: { url: "https://hooks.example.com/x", events: [] } },
  { method: "POST", path: "/webhooks", body: { url: "https://hooks.example.com/x", events: ["stream.paused"] } },
  { method: "GET", path: "/streams", anonymous: true },
  { method: "GET", path: "/streams", authorization: `Bearer svc_test_${"Zz9".repeat(10)}Zz` },
];

/** `{limit,offset,streams,total}` for objects, `error:<code>` for the envelope, the media type otherwise. */
export function shapeOf(exchange: Exchange): string {
  const body = exchange.body;
  if (typeof body?.error?.code === "string") return `error ${body.error.code}`;
  if (typeof body === "object" && body !== null && !Array.isArray(body))
    return `{${Object.keys(body).sort().join(",")}}`;
  return exchange.headers.get("content-type")?.split(";")[0] ?? "(no body)";
}

function describe(exchange: Exchange): string {
  const notes = exchange.violations.length > 0 ? ` — breaks the contract: ${exchange.violations.join("; ")}` : "";
  return `${exchange.status} ${shapeOf(exchange)}${notes}`;
}

/** Sends every probe to a target; the answers are validated like any other. */
export async function runProbes(target: Target, contract: Contract): Promise<Exchange[]> {
  const send = createSender(contract, { api: target.apiBase, admin: null, adminToken: null });
  const answers: Exchange[] = [];
  for (const { anonymous, ...probe } of PROBES)
    answers.push(await send({ ...probe, key: anonymous ? null : target.key }));
  return answers;
}

/** Contract scenarios that ran on both sides, paired request by request, then the probes. */
export function parityPairs(
  mock: ScenarioResult[],
  server: ScenarioResult[],
  probes?: { mock: Exchange[]; server: Exchange[] },
): ParityPair[] {
  const pairs: ParityPair[] = [];
  for (const onMock of mock) {
    const onServer = server.find((result) => result.name === onMock.name);
    if (!onServer || onMock.outcome === "skip" || onServer.outcome === "skip") continue;
    const serverPublic = onServer.exchanges.filter((exchange) => !exchange.request.internal);
    onMock.exchanges.forEach((exchange, i) => {
      const counterpart = serverPublic[i];
      if (counterpart)
        pairs.push({
          source: onMock.name,
          request: requestLine(exchange.request),
          mock: exchange,
          server: counterpart,
        });
    });
  }
  probes?.mock.forEach((exchange, i) => {
    pairs.push({ source: "probe", request: requestLine(exchange.request), mock: exchange, server: probes.server[i]! });
  });
  return pairs;
}

export function parityDifferences(pairs: ParityPair[]): ParityDifference[] {
  return pairs
    .filter(
      (pair) =>
        pair.mock.status !== pair.server.status ||
        shapeOf(pair.mock) !== shapeOf(pair.server) ||
        pair.mock.violations.length > 0,
    )
    .map((pair) => ({
      source: pair.source,
      request: pair.request,
      mock: describe(pair.mock),
      server: describe(pair.server),
    }));
}
