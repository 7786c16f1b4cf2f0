/**
 * `live-stream-hosting trigger <event>`: makes a webhook event happen in test mode, cleans up
 * after itself (no stream is left active, so any number of triggers in a row succeed) and reports
 * what became of each delivery. It drives the API through this SDK only.
 */
import type { Delivery, LiveStreamClient, StreamDetail } from "./client.ts";
import { ConcurrencyLimitError, InsufficientScopeError } from "./errors.ts";
import type { WebhookEventType } from "./webhook-signature.ts";

export const TRIGGERABLE_EVENTS = ["stream.started", "stream.ended", "stream.error"] as const;
export type TriggerableEvent = (typeof TRIGGERABLE_EVENTS)[number];

/** Every stream trigger starts ends by itself after this long, should the command be stopped before it ends it. */
export const SAFETY_DURATION_MINUTES = 1;
/** How often, and for how long at most, `stream.error` reads the stream while waiting for it to fail. */
export const POLL_INTERVAL_MS = 500;
export const POLL_TIMEOUT_MS = 30_000;
/** How long the report waits for each delivery's first attempt (the service answers within 10 s). */
export const DELIVERY_WAIT_MS = 15_000;

export interface TriggerIo {
  out(line: string): void;
  sleep(ms: number): Promise<void>;
}

export async function trigger(
  client: LiveStreamClient,
  { event, baseUrl }: { event: TriggerableEvent; baseUrl: string },
  io: TriggerIo,
): Promise<void> {
  io.out(`Triggering ${event} in test mode on ${baseUrl}`);
  const { creators } = await client.creators.list();
  const creator = creators[0];
  if (creator === undefined) throw new Error("GET /creators lists no creator, so no stream can be started.");

  const marker = event === "stream.error" ? " sim:fails-live" : "";
  let created;
  try {
    created = await client.streams.create({
      creator_id: creator.id,
      product_name: `live-stream-hosting trigger ${event}${marker}`,
      platform: "youtube",
      // A safety net: if this command is stopped before it ends the stream, it ends by itself.
      duration_minutes: SAFETY_DURATION_MINUTES,
    });
  } catch (error) {
    if (error instanceof ConcurrencyLimitError) await explainConcurrencyLimit(client, error);
    throw error;
  }
  io.out(`Started stream ${created.stream_id} with ${creator.name} (${creator.id}): ${created.status}`);
  // The transitions seen here are the events the contract says fire.
  const fired: WebhookEventType[] = [];
  if (created.status === "live") fired.push("stream.started");

  if (event === "stream.error") {
    io.out("Waiting for it to fail (sim:fails-live)…");
    const failed = await waitForStatus(client, created.stream_id, "error", io.sleep);
    io.out(`It failed: ${failed.status}`);
    fired.push("stream.error");
  } else if (created.status === "live") {
    // stream.started is not left behind as an active stream: ending it fires stream.ended too.
    const ended = await client.streams.end(created.stream_id);
    io.out(`Ended it${event === "stream.started" ? " (clean-up: no stream is left active)" : ""}: ${ended.status}`);
    fired.push("stream.ended");
  }

  io.out(`Events fired: ${fired.join(", ") || "(none)"}`);
  await reportDeliveries(client, created.stream_id, fired, io);
}

/**
 * Adds to a 429 concurrency_limit the active streams and the command that ends them, when the
 * server's message does not already list them.
 */
async function explainConcurrencyLimit(client: LiveStreamClient, error: ConcurrencyLimitError): Promise<void> {
  const active = await activeStreamIds(client).catch(() => []);
  if (active.length === 0) return;
  const missing = active.filter((id) => !error.message.includes(id));
  if (missing.length > 0) error.message += ` Active streams: ${active.join(", ")}.`;
  error.message += `\nEnd them with: live-stream-hosting end ${active.join(" ")}`;
}

/** The ids of the key's active streams (preparing and live), newest first. */
export async function activeStreamIds(client: LiveStreamClient): Promise<string[]> {
  const [live, preparing] = await Promise.all([
    client.streams.list({ status: "live", limit: 100 }),
    client.streams.list({ status: "preparing", limit: 100 }),
  ]);
  return [...live.streams, ...preparing.streams].flatMap((stream) => (stream.id === undefined ? [] : [stream.id]));
}

async function waitForStatus(
  client: LiveStreamClient,
  id: string,
  status: StreamDetail["status"],
  sleep: (ms: number) => Promise<void>,
): Promise<StreamDetail> {
  for (let waited = 0; ; waited += POLL_INTERVAL_MS) {
    const stream = await client.streams.get(id);
    if (stream.status === status) return stream;
    if (stream.status !== "live" && stream.status !== "preparing") {
      throw new Error(`Stream ${id} became ${stream.status}, not ${status}.`);
    }
    if (waited >= POLL_TIMEOUT_MS) {
      throw new Error(
        `Stream ${id} is still ${stream.status} after ${POLL_TIMEOUT_MS / 1000} s. The server fails sim:fails-live streams ` +
          "SIM_AGENT_JOIN_MS after they go live; is its lifecycle sweeper running?",
      );
    }
    await sleep(POLL_INTERVAL_MS);
  }
}

/** Which webhooks receive the events, and each delivery's outcome once its first attempt is made. */
async function reportDeliveries(
  client: LiveStreamClient,
  streamId: string,
  fired: readonly WebhookEventType[],
  io: TriggerIo,
): Promise<void> {
  let webhooks;
  try {
    ({ webhooks } = await client.webhooks.list());
  } catch (error) {
    if (!(error instanceof InsufficientScopeError)) throw error;
    io.out("(This key lacks webhooks:write, so the webhooks and their deliveries cannot be read.)");
    return;
  }
  const expected = webhooks
    .filter((webhook) => webhook.active)
    .flatMap((webhook) => webhook.events.filter((type) => fired.includes(type)).map((type) => ({ webhook, type })))
    // In the order the events fired.
    .sort((a, b) => fired.indexOf(a.type) - fired.indexOf(b.type));
  if (expected.length === 0) {
    io.out(
      "No webhook subscribed to these events — run `live-stream-hosting listen --forward-to <url>` to receive them locally, or register one with POST /webhooks (a test key).",
    );
    return;
  }
  io.out(`Deliveries (${expected.length}):`);
  let deliveries: Delivery[] = [];
  for (let waited = 0; ; waited += POLL_INTERVAL_MS) {
    ({ deliveries } = await client.webhooks.deliveries({ stream_id: streamId }));
    const attempted = expected.every(({ webhook, type }) =>
      deliveries.some(
        (delivery) =>
          delivery.webhook_id === webhook.webhook_id && delivery.event_type === type && delivery.attempt > 0,
      ),
    );
    if (attempted || waited >= DELIVERY_WAIT_MS) break;
    await io.sleep(POLL_INTERVAL_MS);
  }
  for (const { webhook, type } of expected) {
    const delivery = deliveries.find((one) => one.webhook_id === webhook.webhook_id && one.event_type === type);
    io.out(`  ${type} → ${webhook.url}: ${outcome(delivery)}`);
  }
}

function outcome(delivery: Delivery | undefined): string {
  if (!delivery || delivery.attempt === 0)
    return `not attempted within ${DELIVERY_WAIT_MS / 1000} s (pending; is the server's delivery worker running?)`;
  const answer =
    delivery.response_status === null ? (delivery.error ?? "no answer") : `HTTP ${delivery.response_status}`;
  if (delivery.status === "succeeded") return `delivered (${answer})`;
  if (delivery.status === "failed") return `failed for good (${answer}) after ${delivery.attempt} attempt(s)`;
  return `refused (${answer}); attempt ${delivery.attempt + 1} at ${delivery.next_attempt_at ?? "a later time"}`;
}
