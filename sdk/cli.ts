/**
 * `live-stream-hosting trigger <event>`: makes a webhook event happen in test mode, so a partner
 * can see their webhook handler receive it without waiting for a real stream. It drives the API
 * through this SDK only, using the contract's simulation markers (`sim:fails-live`).
 * bin.ts runs it; everything it touches (argv, env, output, waiting) is passed in, for tests.
 */
import { parseArgs } from "node:util";
import { createClient, type LiveStreamClient, type StreamDetail } from "./client.ts";
import { ApiConnectionError, ApiError, InsufficientScopeError } from "./errors.ts";
import type { WebhookEventType } from "./webhook-signature.ts";

export const DEFAULT_BASE_URL = "http://localhost:8080/api/v1";
export const API_KEY_ENV = "LIVE_STREAM_HOSTING_API_KEY";
export const BASE_URL_ENV = "LIVE_STREAM_HOSTING_BASE_URL";

export const EXIT_OK = 0;
export const EXIT_API_FAILURE = 1;
export const EXIT_USAGE = 2;

export const TRIGGERABLE_EVENTS = ["stream.started", "stream.ended", "stream.error"] as const;
export type TriggerableEvent = (typeof TRIGGERABLE_EVENTS)[number];

/** A test stream started for `stream.started` ends by itself after this long (and fires stream.ended then). */
export const STARTED_STREAM_MINUTES = 5;
/** How often, and for how long at most, `stream.error` reads the stream while waiting for it to fail. */
export const POLL_INTERVAL_MS = 500;
export const POLL_TIMEOUT_MS = 30_000;

export const USAGE = `Usage: live-stream-hosting trigger <event> [--base-url URL] [--api-key KEY]

Makes a webhook event happen in test mode, with a test key (svc_test_…):
  stream.started  starts a test stream (live at once; it ends by itself after ${STARTED_STREAM_MINUTES} minutes)
  stream.ended    starts a test stream and ends it
  stream.error    starts a test stream marked sim:fails-live and waits until it fails (a few seconds)
Webhooks registered with a test key of the same brand receive the events.

Options:
  --base-url URL  API root; env ${BASE_URL_ENV}, default ${DEFAULT_BASE_URL}
  --api-key KEY   a test key (svc_test_…); env ${API_KEY_ENV}
  -h, --help      show this help

Exit codes: 0 done, 1 the API refused or could not be reached, 2 usage error.`;

export interface CliIo {
  env: Record<string, string | undefined>;
  out(line: string): void;
  err(line: string): void;
  /** How to wait between polls; tests move a clock instead. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

/** Runs the command line `argv` (without `node` and the script) and resolves with the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(argv, io.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`live-stream-hosting: ${error.message}`);
    io.err("Run live-stream-hosting --help for usage.");
    return EXIT_USAGE;
  }
  if (command.kind === "help") {
    io.out(USAGE);
    return EXIT_OK;
  }
  let client: LiveStreamClient;
  try {
    client = createClient({ baseUrl: command.baseUrl, apiKey: command.apiKey });
  } catch (error) {
    io.err(`live-stream-hosting: ${(error as Error).message}`);
    return EXIT_USAGE;
  }
  try {
    await trigger(client, command, io);
    return EXIT_OK;
  } catch (error) {
    io.err(describeFailure(error));
    return EXIT_API_FAILURE;
  }
}

type Command = { kind: "help" } | { kind: "trigger"; event: TriggerableEvent; baseUrl: string; apiKey: string };

class UsageError extends Error {}

function parseCommand(argv: readonly string[], env: CliIo["env"]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { "base-url": { type: "string" }, "api-key": { type: "string" }, help: { type: "boolean", short: "h" } },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals[0] === "help") return { kind: "help" };
  const [name, event, ...extra] = positionals;
  if (name === undefined) throw new UsageError("no command given; the command is trigger <event>.");
  if (name !== "trigger") throw new UsageError(`unknown command "${name}"; the command is trigger <event>.`);
  if (!isTriggerable(event)) {
    const got = event === undefined ? "no event given" : `unknown event "${event}"`;
    throw new UsageError(`${got}; trigger one of ${TRIGGERABLE_EVENTS.join(", ")}.`);
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" after the event.`);
  const apiKey = values["api-key"] ?? env[API_KEY_ENV];
  if (!apiKey) throw new UsageError(`no API key: pass --api-key svc_test_… or set ${API_KEY_ENV}.`);
  if (apiKey.startsWith("svc_live_")) {
    throw new UsageError(
      "refusing a live key (svc_live_…): trigger makes test-mode events only, and a live key would start a real, billed stream. " +
        "Pass a test key (svc_test_…), created in the dashboard like any other key.",
    );
  }
  if (!apiKey.startsWith("svc_test_")) throw new UsageError("the API key must be a test key, starting svc_test_.");
  const baseUrl = values["base-url"] ?? (env[BASE_URL_ENV] || DEFAULT_BASE_URL);
  return { kind: "trigger", event, baseUrl, apiKey };
}

function isTriggerable(event: string | undefined): event is TriggerableEvent {
  return (TRIGGERABLE_EVENTS as readonly (string | undefined)[]).includes(event);
}

async function trigger(client: LiveStreamClient, { event, baseUrl }: { event: TriggerableEvent; baseUrl: string }, io: CliIo): Promise<void> {
  io.out(`Triggering ${event} in test mode on ${baseUrl}`);
  const { creators } = await client.creators.list();
  const creator = creators[0];
  if (creator === undefined) throw new Error("GET /creators lists no creator, so no stream can be started.");

  const marker = event === "stream.error" ? " sim:fails-live" : "";
  const created = await client.streams.create({
    creator_id: creator.id,
    product_name: `live-stream-hosting trigger ${event}${marker}`,
    platform: "youtube",
    ...(event === "stream.started" ? { duration_minutes: STARTED_STREAM_MINUTES } : {}),
  });
  io.out(`Started stream ${created.stream_id} with ${creator.name} (${creator.id}): ${created.status}`);
  // The API lists no event history (StreamDetail.events is reserved, always empty), so the events
  // are the transitions seen here, which the contract says fire them.
  const fired: WebhookEventType[] = [];
  if (created.status === "live") fired.push("stream.started");

  if (event === "stream.ended") {
    const ended = await client.streams.end(created.stream_id);
    io.out(`Ended it: ${ended.status}`);
    fired.push("stream.ended");
  } else if (event === "stream.error") {
    io.out("Waiting for it to fail (sim:fails-live)…");
    const failed = await waitForStatus(client, created.stream_id, "error", io.sleep ?? defaultSleep);
    io.out(`It failed: ${failed.status}`);
    fired.push("stream.error");
  } else {
    io.out(`It stays live for ${STARTED_STREAM_MINUTES} minutes, then ends by itself (stream.ended); end it sooner with DELETE /streams/${created.stream_id}.`);
  }

  io.out(`Events fired: ${fired.join(", ") || "(none)"}`);
  await reportSubscribers(client, fired, io);
}

async function waitForStatus(client: LiveStreamClient, id: string, status: StreamDetail["status"], sleep: (ms: number) => Promise<void>): Promise<StreamDetail> {
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

/** Says which registered webhooks should receive the events, so a missing delivery can be chased. */
async function reportSubscribers(client: LiveStreamClient, fired: readonly string[], io: CliIo): Promise<void> {
  let webhooks;
  try {
    ({ webhooks } = await client.webhooks.list());
  } catch (error) {
    if (!(error instanceof InsufficientScopeError)) throw error;
    io.out("(This key lacks webhooks:write, so the registered webhooks cannot be listed.)");
    return;
  }
  const subscribed = webhooks.filter((webhook) => webhook.active && webhook.events.some((type) => fired.includes(type)));
  if (subscribed.length === 0) {
    io.out("No active webhook of this brand's test mode subscribes to these events: register one with POST /webhooks (a test key) to receive them.");
    return;
  }
  io.out(`Sent to ${subscribed.length} webhook(s):`);
  for (const webhook of subscribed) io.out(`  ${webhook.url} (${webhook.events.filter((type) => fired.includes(type)).join(", ")})`);
  io.out("Check your endpoint's logs for the deliveries; one not answered 2xx is retried later with backoff.");
}

function describeFailure(error: unknown): string {
  if (error instanceof ApiError) {
    const requestId = error.requestId === undefined ? "" : ` (request id ${error.requestId})`;
    return `API error ${error.status} ${error.code ?? "(unrecognised)"}: ${error.message}${requestId}`;
  }
  if (error instanceof ApiConnectionError) return `Could not reach the API: ${error.message}`;
  return `Failed: ${error instanceof Error ? error.message : String(error)}`;
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
