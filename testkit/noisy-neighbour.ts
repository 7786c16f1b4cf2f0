/**
 * The noisy-neighbour scenario, as the suite (server/tests/noisy-neighbour.test.ts) and the
 * benchmark (bench/noisy-neighbour.ts) run it against a started server: brands whose webhooks go
 * to receivers that never answer start and end test streams continuously, while another brand
 * (the victim) starts and ends streams of its own; how long after its event each of the victim's
 * deliveries arrives is what is measured.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ADMIN_TOKEN, streamBody } from "./harness.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One local receiver for every webhook of the scenario: `/hang/<brand>/<n>` reads the delivery and
 * never answers (the server's time-out ends it); `/victim` answers 204 at once and notes how long
 * after its event each delivery arrived (the first arrival of each event id).
 */
export async function startScenarioReceiver() {
  const hanging = new Map<string, number>();
  const mostHanging = new Map<string, number>();
  const arrivedAfterMs = new Map<string, number>();
  let hangingNow = 0;
  const server: Server = createServer((request: IncomingMessage, response) => {
    const path = request.url ?? "";
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    if (path.startsWith("/hang/")) {
      const brand = path.split("/")[2]!;
      hangingNow += 1;
      const now = (hanging.get(brand) ?? 0) + 1;
      hanging.set(brand, now);
      mostHanging.set(brand, Math.max(now, mostHanging.get(brand) ?? 0));
      response.once("close", () => {
        hangingNow -= 1;
        hanging.set(brand, hanging.get(brand)! - 1);
      });
      return;
    }
    request.on("end", () => {
      const arrivedAt = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string; created_at: string };
      if (!arrivedAfterMs.has(event.id)) arrivedAfterMs.set(event.id, arrivedAt - Date.parse(event.created_at));
      response.writeHead(204).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path: string) => origin + path,
    /** Attempts held open right now, in all. */
    hanging: () => hangingNow,
    /** The most attempts one noisy brand had held open at once. */
    mostHangingPerBrand: () => Math.max(0, ...mostHanging.values()),
    /** The victim's deliveries: event id → milliseconds from the event's `created_at` to arrival. */
    arrivedAfterMs,
    /** Ends every held attempt (the server sees the connection drop) and stops listening. */
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type ScenarioReceiver = Awaited<ReturnType<typeof startScenarioReceiver>>;

export interface NoisyNeighbourOptions {
  /** Brands whose receivers never answer (0: the quiet figure, the victim alone). */
  noisyBrands: number;
  /** Webhooks of each noisy brand, all to receivers that never answer. */
  webhooksPerNoisyBrand: number;
  /** The victim's events (half started, half ended streams). */
  victimEvents: number;
  /** How long to wait, after the victim's last event, for deliveries still missing. */
  graceMs: number;
}

export interface NoisyNeighbourResult {
  /** Milliseconds from each victim event to its delivery's arrival, sorted; missing ones are left out. */
  latenciesMs: number[];
  /** Victim events whose delivery never arrived within the grace. */
  missing: number;
  /** The most attempts one noisy brand held open at once (on one server process). */
  mostHangingPerBrand: number;
  /** Streams the noisy brands started (and ended) meanwhile. */
  noisyStreams: number;
}

/** The nearest-rank percentile of sorted values; Infinity when `missing` values (never arrived) reach into it. */
export function percentile(sorted: readonly number[], missing: number, p: number): number {
  const rank = Math.ceil((p / 100) * (sorted.length + missing));
  return rank > sorted.length ? Number.POSITIVE_INFINITY : sorted[Math.max(rank, 1) - 1]!;
}

interface Answer {
  status: number;
  body: any;
}

async function call(base: string, method: string, path: string, key: string, body?: unknown): Promise<Answer> {
  const response = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function expectStatus(answer: Promise<Answer>, status: number, what: string): Promise<any> {
  const got = await answer;
  if (got.status !== status)
    throw new Error(`${what}: expected ${status}, got ${got.status} ${JSON.stringify(got.body)}`);
  return got.body;
}

/** A brand with a raised request limit and an all-scopes test key, made through the operator API. */
async function tenant(base: string, name: string): Promise<string> {
  const brand = await expectStatus(
    call(base, "POST", "/admin/v1/brands", ADMIN_TOKEN, {
      name,
      vertical: "live-commerce",
      plan: "growth",
      rate_limit_per_minute: 1_000_000,
    }),
    201,
    "creating a brand",
  );
  const key = await expectStatus(
    call(base, "POST", "/admin/v1/keys", ADMIN_TOKEN, {
      brand_id: brand.brand_id,
      name: name,
      environment: "test",
      scopes: ["streams:read", "streams:write", "analytics:read", "webhooks:write"],
    }),
    201,
    "creating a key",
  );
  return key.key as string;
}

async function register(base: string, key: string, url: string): Promise<void> {
  await expectStatus(
    call(base, "POST", "/api/v1/webhooks", key, { url, events: ["stream.started", "stream.ended", "stream.error"] }),
    201,
    `registering ${url}`,
  );
}

/** Starts a test stream and ends it: two events. */
async function startAndEnd(base: string, key: string, pauseMs = 0): Promise<boolean> {
  const created = await call(base, "POST", "/api/v1/streams", key, streamBody());
  if (created.status !== 201) return false;
  if (pauseMs > 0) await sleep(pauseMs);
  return (await call(base, "DELETE", `/api/v1/streams/${created.body.stream_id}`, key)).status === 200;
}

/**
 * Runs the scenario against the server at `base` (its operator API on, with the test's
 * ADMIN_TOKEN, and `WEBHOOK_ALLOW_HOSTS=127.0.0.1`). The noisy brands start and end streams one
 * after another, brand by brand, until the victim's deliveries have arrived; the victim starts
 * only once the noisy brands' receivers hold attempts open.
 */
export async function runNoisyNeighbour(
  base: string,
  receiver: ScenarioReceiver,
  { noisyBrands, webhooksPerNoisyBrand, victimEvents, graceMs }: NoisyNeighbourOptions,
): Promise<NoisyNeighbourResult> {
  const victimKey = await tenant(base, "Victim");
  await register(base, victimKey, receiver.url("/victim"));
  const noisyKeys = await Promise.all(
    Array.from({ length: noisyBrands }, async (_, brand) => {
      const key = await tenant(base, `Noisy ${brand}`);
      for (let hook = 0; hook < webhooksPerNoisyBrand; hook++)
        await register(base, key, receiver.url(`/hang/${brand}/${hook}`));
      return key;
    }),
  );

  let stopped = false;
  let noisyStreams = 0;
  const noisy = (async () => {
    for (let turn = 0; !stopped && noisyKeys.length > 0; turn++) {
      if (await startAndEnd(base, noisyKeys[turn % noisyKeys.length]!)) noisyStreams += 1;
      await sleep(10);
    }
  })();
  try {
    if (noisyBrands > 0) {
      const deadline = Date.now() + 60_000;
      while (receiver.hanging() < Math.min(10, noisyBrands * webhooksPerNoisyBrand)) {
        if (Date.now() > deadline) throw new Error("the noisy brands' receivers never held an attempt open");
        await sleep(20);
      }
    }
    for (let sent = 0; sent < victimEvents; sent += 2) {
      if (!(await startAndEnd(base, victimKey, 20))) throw new Error("the victim could not start and end a stream");
      await sleep(20);
    }
    const deadline = Date.now() + graceMs;
    while (receiver.arrivedAfterMs.size < victimEvents && Date.now() < deadline) await sleep(20);
  } finally {
    stopped = true;
    await noisy;
  }
  const latenciesMs = [...receiver.arrivedAfterMs.values()].sort((a, b) => a - b);
  return {
    latenciesMs,
    missing: victimEvents - latenciesMs.length,
    mostHangingPerBrand: receiver.mostHangingPerBrand(),
    noisyStreams,
  };
}
