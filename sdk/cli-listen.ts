/**
 * `live-stream-hosting listen --forward-to <url>`: receives the brand's test-mode events over
 * `GET /webhooks/listen` (no inbound connection, no tunnel) and POSTs each to a local URL, signed
 * with a session secret exactly as the service signs a webhook delivery (webhookDeliveryHeaders).
 */
import { randomBytes } from "node:crypto";
import type { LiveStreamClient } from "./client.ts";
import type { FetchLike } from "./retry.ts";
import type { WebhookEventType } from "./webhook-signature.ts";
import { webhookDeliveryHeaders } from "./webhooks.ts";

/** The service's time limit for a receiver's answer; a forward waits as long. */
export const FORWARD_TIMEOUT_MS = 10_000;
/** Event ids remembered to skip the repeats of a resumed stream. */
const REMEMBERED_IDS = 10_000;

export interface ListenIo {
  out(line: string): void;
  err(line: string): void;
  fetch: FetchLike;
  /** Aborted to stop listening (Ctrl-C). */
  signal?: AbortSignal | undefined;
  now?: (() => number) | undefined;
}

/** A secret in the service's format: `whsec_` and 32 random bytes, base64url. */
export function newSessionSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

export async function listen(
  client: LiveStreamClient,
  {
    forwardTo,
    events,
    secret,
    baseUrl,
  }: { forwardTo: string; events: readonly WebhookEventType[] | undefined; secret: string; baseUrl: string },
  io: ListenIo,
): Promise<void> {
  const now = io.now ?? Date.now;
  io.out(
    `Listening for test-mode events on ${baseUrl}${events ? ` (${events.join(", ")})` : ""}; forwarding each to ${forwardTo}`,
  );
  io.out(`Signing secret of this session: ${secret}`);
  io.out(
    'Verify with it as with a webhook\'s secret: verifyWebhook(rawBody, req.headers["x-service-signature"], secret). Ctrl-C to stop.',
  );
  const seen = new RecentIds(REMEMBERED_IDS);
  let lastId: string | undefined;
  const stream = client.webhooks.listen({
    events,
    signal: io.signal,
    onConnect: () => io.out(lastId ? `Reconnected; resuming after ${lastId}.` : "Connected; waiting for events."),
    onReconnect: ({ delayMs, reason }) =>
      io.err(`Connection lost (${reason}); reconnecting in ${(delayMs / 1000).toFixed(1)} s.`),
  });
  for await (const event of stream) {
    lastId = event.id;
    // A resumed stream repeats the events just before the one it resumes after.
    if (!seen.add(event.id)) continue;
    const started = now();
    const result = await forward(io.fetch, forwardTo, event.body, secret, now);
    let streamId = "-";
    try {
      streamId = (JSON.parse(event.body) as { data?: { stream_id?: string } }).data?.stream_id ?? "-";
    } catch {
      // The body is sent as it came; only the line printed lacks the stream.
    }
    io.out(
      `${new Date(started).toISOString()}  ${event.type.padEnd(14)}  ${event.id}  stream ${streamId}  → ${result} (${now() - started} ms)`,
    );
  }
}

/** POSTs one event as a delivery; what the receiver answered, for the line printed. */
async function forward(
  fetch: FetchLike,
  url: string,
  body: string,
  secret: string,
  now: () => number,
): Promise<string> {
  try {
    const response = await fetch(
      new Request(url, {
        method: "POST",
        headers: webhookDeliveryHeaders(body, secret, Math.floor(now() / 1000)),
        body,
        // Like the service: a redirect is an answer (a failure), never followed.
        redirect: "manual",
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      }),
    );
    await response.body?.cancel();
    return `${response.status}${response.ok ? "" : " (not 2xx: the service would retry it)"}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const name =
      (error as Error).name === "TimeoutError"
        ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`
        : (cause ?? (error as Error).message);
    return `failed: ${name}`;
  }
}

/** The last `size` ids, oldest forgotten first: bounded memory however long the session. */
class RecentIds {
  private readonly ids = new Set<string>();
  private readonly size: number;
  constructor(size: number) {
    this.size = size;
  }
  /** False when `id` was seen already. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.size) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
}
