/**
 * `client.webhooks.listen()`: the brand's test-mode events from `GET /webhooks/listen`
 * (server-sent events), reconnecting after a dropped connection and resuming after the last event
 * received, so none that happened meanwhile is missed. The SDK's only runtime dependency is
 * openapi-fetch, so the small part of the SSE format the endpoint uses is read here.
 */
import { ApiError, errorFromBody } from "./errors.ts";
import type { FetchLike } from "./retry.ts";
import type { WebhookEventType } from "./webhook-signature.ts";

/** One event as the stream carries it: `body` is the delivery body, byte for byte. */
export interface ListenedEvent {
  id: string;
  type: WebhookEventType;
  body: string;
}

export interface ListenOptions {
  /** Only these event types (default all). */
  events?: readonly WebhookEventType[] | undefined;
  /** Resume after this event id, as a previous listen() reported it. */
  lastEventId?: string | undefined;
  /** Stops listening: the iteration ends. */
  signal?: AbortSignal | undefined;
  /**
   * Told when the connection dropped, or the server answered with an error worth retrying (429,
   * 5xx: `error`), and is being made again: the attempt (from 1), the wait and why.
   */
  onReconnect?:
    | ((info: { attempt: number; delayMs: number; reason: string; error?: ApiError | undefined }) => void)
    | undefined;
  /** Headers sent on every connection, besides the key's. */
  headers?: Record<string, string> | undefined;
  /** Told when a connection is open (the first, or after a reconnect). */
  onConnect?: (() => void) | undefined;
  /** No byte for this long (the server sends a keep-alive every 15 s) and the connection is taken as dead. Default 45 000. */
  idleTimeoutMs?: number | undefined;
}

/** Backoff between reconnections: 0.5 s doubling to 10 s. */
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;

/** Statuses that reconnecting cannot fix: the key, the scope, the mode or the request. */
function isFinal(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

export async function* listenEvents(
  fetch: FetchLike,
  url: string,
  headers: Record<string, string>,
  options: ListenOptions = {},
): AsyncGenerator<ListenedEvent, void, undefined> {
  const { signal, idleTimeoutMs = 45_000 } = options;
  let lastEventId = options.lastEventId;
  const query = options.events && options.events.length > 0 ? `?events=${options.events.join(",")}` : "";
  let failures = 0;
  while (!signal?.aborted) {
    const connection = new AbortController();
    const abort = () => connection.abort();
    signal?.addEventListener("abort", abort);
    let idle: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Error(`no data for ${idleTimeoutMs} ms`)), idleTimeoutMs);
    };
    let reason: string;
    let answered: ApiError | undefined;
    try {
      touch();
      const response = await fetch(
        new Request(`${url}${query}`, {
          headers: {
            ...headers,
            ...options.headers,
            Accept: "text/event-stream",
            ...(lastEventId ? { "Last-Event-ID": lastEventId } : {}),
          },
          signal: connection.signal,
        }),
      );
      if (!response.ok) {
        const text = await response.text();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        const error = errorFromBody(response.status, body, response);
        if (isFinal(response.status)) throw error;
        answered = error;
        reason = error.message;
      } else {
        failures = 0;
        options.onConnect?.();
        for await (const event of readEvents(response.body!, touch)) {
          lastEventId = event.id;
          yield event;
        }
        reason = "the server closed the stream";
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof ApiError) throw error;
      const cause = connection.signal.aborted ? connection.signal.reason : error;
      reason = cause instanceof Error ? cause.message : String(cause);
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener("abort", abort);
      connection.abort();
    }
    failures += 1;
    const delayMs = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (failures - 1));
    options.onReconnect?.({ attempt: failures, delayMs, reason, error: answered });
    await sleep(delayMs, signal);
  }
}

/** The `id`/`event`/`data` messages of a text/event-stream body; comments and `retry:` are skipped. */
async function* readEvents(body: ReadableStream<Uint8Array>, onBytes: () => void): AsyncGenerator<ListenedEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let fields: { id?: string; event?: string; data: string[] } = { data: [] };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    onBytes();
    buffer += decoder.decode(chunk, { stream: true });
    for (let newline = buffer.indexOf("\n"); newline !== -1; newline = buffer.indexOf("\n")) {
      const line = buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      if (line === "") {
        if (fields.id && fields.event && fields.data.length > 0)
          yield { id: fields.id, type: fields.event as WebhookEventType, body: fields.data.join("\n") };
        fields = { data: [] };
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const name = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (name === "id") fields.id = value;
      else if (name === "event") fields.event = value;
      else if (name === "data") fields.data.push(value);
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
