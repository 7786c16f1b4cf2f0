/**
 * `live-stream-hosting`, the SDK's command: partner tools for test mode.
 * - `trigger <event>` (cli-trigger.ts) makes a webhook event happen and reports its deliveries;
 * - `listen --forward-to <url>` (cli-listen.ts) forwards test-mode events to a local receiver;
 * - `grade --url <receiver> --secret <whsec_…>` (cli-grade.ts) scores a webhook receiver;
 * - `end <stream_id>…` ends streams (what a `429 concurrency_limit` tells you to run);
 * - `deliveries list|show|retry` and `recover` (cli-deliveries.ts) read and resend webhook deliveries;
 * - `logs tail` (cli-logs.ts) follows the request log as requests happen;
 * - `clock [advance <duration>]` (cli-clock.ts) reads or moves the brand's test clock.
 * bin.ts runs it; everything it touches (argv, env, output, waiting, fetch) is passed in, for tests.
 */
import { terminalSafeOutput } from "./terminal-text.ts";
import { parseArgs } from "node:util";
import { grade, MOCK_HEADER } from "./cli-grade.ts";
import { listen, newSessionSecret } from "./cli-listen.ts";
import { TRIGGERABLE_EVENTS, type TriggerableEvent, trigger } from "./cli-trigger.ts";
import { type DeliveriesCommand, runDeliveries, sinceOf } from "./cli-deliveries.ts";
import { advanceSecondsOf, type ClockCommand, runClock } from "./cli-clock.ts";
import { createClient, type LiveStreamClient } from "./client.ts";
import { type LogsFilters, statusFilterValid, tailLogs } from "./cli-logs.ts";
import { ApiConnectionError, ApiError } from "./errors.ts";
import type { FetchLike } from "./retry.ts";
import type { WebhookEventType } from "./webhook-signature.ts";

export { MOCK_HEADER } from "./cli-grade.ts";
export { TRIGGERABLE_EVENTS, type TriggerableEvent } from "./cli-trigger.ts";

export const DEFAULT_BASE_URL = "http://localhost:8080/api/v1";
export const API_KEY_ENV = "LIVE_STREAM_HOSTING_API_KEY";
export const BASE_URL_ENV = "LIVE_STREAM_HOSTING_BASE_URL";

export const EXIT_OK = 0;
export const EXIT_API_FAILURE = 1;
export const EXIT_USAGE = 2;

const EVENT_TYPES: readonly WebhookEventType[] = ["stream.started", "stream.ended", "stream.error"];

export const USAGE = `Usage: live-stream-hosting <command> [options]

Test-mode tools for the Live Stream Hosting API. Commands that call the API take a test key
(svc_test_…): --api-key or ${API_KEY_ENV}; and the API root: --base-url or ${BASE_URL_ENV}
(default ${DEFAULT_BASE_URL}).

  listen --forward-to URL [--events a,b] [--secret whsec_…]
      Receives this brand's test-mode events as they happen (no tunnel, no public URL) and POSTs
      each to URL signed exactly as a webhook delivery, with a session secret printed at start
      (or --secret, to keep your receiver's). One line per event: time, type, event id, stream id,
      the receiver's answer. Reconnects and resumes without losing events. Ctrl-C to stop.

  trigger <event>
      Makes a webhook event happen, with a test stream that is never left active:
        stream.started  starts a stream, then ends it (stream.ended follows)
        stream.ended    the same
        stream.error    starts a stream marked sim:fails-live and waits until it fails
      Then reports each webhook delivery's outcome.

  grade --url URL --secret whsec_… [--timeout SECONDS] [--json]
      Sends your webhook receiver valid, duplicate, out-of-order, reformatted (spaces, escapes)
      and slow deliveries (each must be answered 2xx within 10 s) and tampered, wrongly signed,
      stale, future and unsigned ones (each must be refused), all at once, then one line per
      case, hints (e.g. "the secret does not match") and "N passed, M failed". --json prints one
      JSON report instead. Exits 1 if a case failed: a CI gate. Needs no API key.

  end <stream_id>...
      Ends streams (DELETE /streams/{id}), e.g. those a 429 concurrency_limit names.

  deliveries list [--status pending|succeeded|failed] [--webhook ID] [--stream ID] [--limit N]
      The key's mode's webhook deliveries, newest first: outcome, attempts, the last answer.
  deliveries show <delivery_id>
      One delivery: every attempt (time, status or error, duration, what the receiver answered,
      what sent it) and the exact payload.
  deliveries retry <delivery_id>
      Sends the delivery again now: the same event id and body, a fresh signature.
  recover --webhook ID --since TIME
      Once your receiver is fixed: sends every failed delivery of the webhook since TIME (an ISO
      time, or a duration back such as 2h or 3d; at most 7d) again, with their original event ids.
  (deliveries and recover take a live key too: they start nothing and bill nothing.)

  clock
      The brand's test clock: the time test mode runs on, and how far ahead of real time.
  clock advance DURATION
      Moves the test clock forward by DURATION (90s, 30m, 2h, 7d; at most 7d a call, never
      back). When it answers, test streams' time-outs and scheduled ends due by then have
      happened; webhook attempts due by then (a failing receiver's retries) follow within
      seconds. Live mode is never affected.

  logs tail [--status 4xx|5xx|CODE] [--method METHOD] [--path /streams]
      Follows the request log of the key's mode (a key with logs:read) as requests happen, made
      from anywhere: one line per request with its time, status, method, path, request id and
      error code; a request shows within about 2 s. --path also matches the paths below it. Polls
      once a second (requests of the brand's rate limit; it slows down when the brand's window
      runs low). Takes a live key too. Ctrl-C to stop.

Options:
  --base-url URL  API root; env ${BASE_URL_ENV}, default ${DEFAULT_BASE_URL}
  --api-key KEY   a test key (svc_test_…); env ${API_KEY_ENV}
  -h, --help      show this help

Exit codes: 0 done (grade: every case passed), 1 the API refused or could not be reached
(grade: a case failed), 2 usage error, or the URL is the static mock (npm run mock), which keeps
no state and sends no events: run these against the dynamic mock (npm run mock -- --dynamic) or
the server (npm start) with a test key. grade's --url must be a receiver, never the mock.`;

export interface CliIo {
  env: Record<string, string | undefined>;
  out(line: string): void;
  err(line: string): void;
  /** How to wait between polls; tests move a clock instead. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** What `listen` and the client send requests with; globalThis.fetch by default. */
  fetch?: FetchLike | undefined;
  /** Aborted to stop `listen` (bin.ts: on Ctrl-C). */
  signal?: AbortSignal | undefined;
}

type Api = { baseUrl: string; apiKey: string };
type Command =
  | { kind: "help" }
  | ({ kind: "trigger"; event: TriggerableEvent } & Api)
  | ({ kind: "listen"; forwardTo: string; events: WebhookEventType[] | undefined; secret: string | undefined } & Api)
  | ({ kind: "end"; ids: string[] } & Api)
  | ({ kind: "deliveries"; command: DeliveriesCommand } & Api)
  | ({ kind: "logs"; filters: LogsFilters } & Api)
  | ({ kind: "clock"; command: ClockCommand } & Api)
  | { kind: "grade"; url: string; secret: string; timeoutMs: number; json: boolean };

class UsageError extends Error {}

/**
 * Runs the command line `argv` (without `node` and the script) and resolves with the exit code.
 * Every line it prints is terminal-safe (terminal-text.ts): it quotes URLs, names and answers
 * that others chose.
 */
export async function main(argv: readonly string[], sentIo: CliIo): Promise<number> {
  const io = terminalSafeOutput(sentIo);
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
  if (command.kind === "grade") {
    const result = await grade(command, { out: io.out });
    if (result.mock) {
      io.err(
        `live-stream-hosting: ${command.url} is the mock (npm run mock; it answers with an X-Mock header): ` +
          "--url must be your webhook receiver, not the mock.",
      );
      return EXIT_USAGE;
    }
    return result.failed === 0 ? EXIT_OK : EXIT_API_FAILURE;
  }
  if (await servedByStaticMock(command.baseUrl, io.fetch)) {
    io.err(staticMockMessage(command.kind, command.baseUrl));
    return EXIT_USAGE;
  }
  let client: LiveStreamClient;
  try {
    client = createClient({ baseUrl: command.baseUrl, apiKey: command.apiKey, fetch: io.fetch });
  } catch (error) {
    io.err(`live-stream-hosting: ${(error as Error).message}`);
    return EXIT_USAGE;
  }
  const sleep = io.sleep ?? defaultSleep;
  try {
    if (command.kind === "trigger") await trigger(client, command, { out: io.out, sleep });
    else if (command.kind === "end") await endStreams(client, command.ids, io);
    else if (command.kind === "deliveries") await runDeliveries(client, command.command, io);
    else if (command.kind === "clock") await runClock(client, command.command, io);
    else if (command.kind === "logs")
      await tailLogs(client, command.filters, { out: io.out, err: io.err, sleep, signal: io.signal });
    else {
      const secret = command.secret ?? newSessionSecret();
      await listen(
        client,
        { ...command, secret },
        { out: io.out, err: io.err, fetch: io.fetch ?? ((request) => globalThis.fetch(request)), signal: io.signal },
      );
    }
    return EXIT_OK;
  } catch (error) {
    io.err(describeFailure(error));
    return EXIT_API_FAILURE;
  }
}

/** What each command cannot do on the static mock, said plainly. */
const ON_THE_STATIC_MOCK = {
  listen: "listen has no events to receive there",
  trigger: "trigger cannot make an event happen or deliver it there",
  end: "end has no streams to end there",
  deliveries: "it has no deliveries to read or send again",
  logs: "logs tail has no request log to follow there",
  clock: "it has no test clock to read or move",
} as const;

function staticMockMessage(command: keyof typeof ON_THE_STATIC_MOCK, url: string): string {
  return (
    `live-stream-hosting: ${url} is the static mock (npm run mock; it answers with X-Mock: static). ` +
    `It answers the documented examples and keeps no state, so ${ON_THE_STATIC_MOCK[command]}. ` +
    "Run this against the dynamic mock (npm run mock -- --dynamic) or the server (npm start) with a test key (svc_test_…)."
  );
}

/**
 * Whether `baseUrl` is the static mock: its discovery document (GET {baseUrl}/, no key needed)
 * carries MOCK_HEADER with any value but `dynamic`. The dynamic mock (`X-Mock: dynamic`) is the
 * server on data of its own, where every command works. Unreachable or anything else: not the
 * mock (the command's own request then says why).
 */
async function servedByStaticMock(baseUrl: string, fetchLike: FetchLike | undefined): Promise<boolean> {
  try {
    const request = new Request(`${baseUrl.replace(/\/+$/, "")}/`, { signal: AbortSignal.timeout(10_000) });
    const response = await (fetchLike ?? ((input) => globalThis.fetch(input)))(request);
    await response.body?.cancel();
    const mock = response.headers.get(MOCK_HEADER);
    return mock !== null && mock !== "dynamic";
  } catch {
    return false;
  }
}

async function endStreams(client: LiveStreamClient, ids: readonly string[], io: CliIo): Promise<void> {
  for (const id of ids) {
    const ended = await client.streams.end(id);
    io.out(`Ended stream ${ended.stream_id}: ${ended.status}`);
  }
}

const COMMANDS = "listen, trigger, grade, end, deliveries, recover, logs and clock";

const API_OPTIONS = { "base-url": { type: "string" }, "api-key": { type: "string" } } as const;

function parseCommand(argv: readonly string[], env: CliIo["env"]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        ...API_OPTIONS,
        help: { type: "boolean", short: "h" },
        "forward-to": { type: "string" },
        events: { type: "string" },
        secret: { type: "string" },
        url: { type: "string" },
        timeout: { type: "string" },
        json: { type: "boolean" },
        status: { type: "string" },
        webhook: { type: "string" },
        stream: { type: "string" },
        limit: { type: "string" },
        since: { type: "string" },
        method: { type: "string" },
        path: { type: "string" },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals[0] === "help") return { kind: "help" };
  const [name, ...rest] = positionals;
  const allowed = (command: string, options: readonly string[]) => {
    const extra = Object.keys(values).find((option) => option !== "help" && !options.includes(option));
    if (extra) throw new UsageError(`${command} takes no --${extra}.`);
  };
  switch (name) {
    case undefined:
      throw new UsageError(`no command given; the commands are ${COMMANDS}.`);
    case "trigger": {
      allowed("trigger", ["base-url", "api-key"]);
      const [event, ...extra] = rest;
      if (!isTriggerable(event)) {
        const got = event === undefined ? "no event given" : `unknown event "${event}"`;
        throw new UsageError(`${got}; trigger one of ${TRIGGERABLE_EVENTS.join(", ")}.`);
      }
      if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" after the event.`);
      return {
        kind: "trigger",
        event,
        ...apiOf(values, env, "trigger makes test-mode events only, and a live key would start a real, billed stream"),
      };
    }
    case "listen": {
      allowed("listen", ["base-url", "api-key", "forward-to", "events", "secret"]);
      if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"; listen takes --forward-to URL.`);
      const forwardTo = values["forward-to"];
      if (!forwardTo)
        throw new UsageError(
          "listen needs --forward-to URL, your webhook receiver (e.g. http://localhost:3000/hooks).",
        );
      assertHttpUrl("--forward-to", forwardTo);
      if (values.secret !== undefined) assertSecret(values.secret);
      return {
        kind: "listen",
        forwardTo,
        events: eventsOf(values.events),
        secret: values.secret,
        ...apiOf(values, env, "listen receives test-mode events only"),
      };
    }
    case "end": {
      allowed("end", ["base-url", "api-key"]);
      if (rest.length === 0) throw new UsageError("end needs the ids of the streams to end.");
      return { kind: "end", ids: rest, ...apiOf(values, env, "these tools are for test mode") };
    }
    case "grade": {
      allowed("grade", ["url", "secret", "timeout", "json"]);
      if (rest.length > 0)
        throw new UsageError(`unexpected argument "${rest[0]}"; grade takes --url URL --secret whsec_….`);
      if (!values.url) throw new UsageError("grade needs --url URL, your webhook receiver.");
      assertHttpUrl("--url", values.url);
      if (!values.secret) throw new UsageError("grade needs --secret whsec_…, the secret your receiver verifies with.");
      assertSecret(values.secret);
      const seconds = values.timeout === undefined ? 10 : Number(values.timeout);
      if (!(seconds > 0 && seconds <= 60))
        throw new UsageError(`--timeout must be seconds, more than 0 and at most 60; got "${values.timeout}".`);
      return {
        kind: "grade",
        url: values.url,
        secret: values.secret,
        timeoutMs: Math.round(seconds * 1000),
        json: values.json === true,
      };
    }
    case "deliveries":
      allowed("deliveries", ["base-url", "api-key", "status", "webhook", "stream", "limit"]);
      return {
        kind: "deliveries",
        command: deliveriesCommandOf(rest, values),
        ...apiOf(values, env, "", { live: true }),
      };
    case "recover": {
      allowed("recover", ["base-url", "api-key", "webhook", "since"]);
      if (rest.length > 0)
        throw new UsageError(`unexpected argument "${rest[0]}"; recover takes --webhook ID --since TIME.`);
      if (!values.webhook)
        throw new UsageError("recover needs --webhook ID, the webhook whose failed deliveries to send again.");
      if (!values.since)
        throw new UsageError("recover needs --since TIME: an ISO time, or a duration back such as 2h.");
      const since = sinceOf(values.since, new Date());
      if (!since)
        throw new UsageError(`--since must be an ISO time or a duration such as 2h or 3d; got "${values.since}".`);
      return {
        kind: "deliveries",
        command: { action: "recover", webhookId: values.webhook, since },
        ...apiOf(values, env, "", { live: true }),
      };
    }
    case "logs": {
      allowed("logs", ["base-url", "api-key", "status", "method", "path"]);
      const [action, ...extra] = rest;
      if (action !== "tail")
        throw new UsageError(
          `logs needs tail${action === undefined ? "" : `, not "${action}"`}: logs tail [--status 4xx].`,
        );
      if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"; logs tail takes options only.`);
      const { status, path } = values;
      const method = values.method?.toUpperCase();
      if (status !== undefined && !statusFilterValid(status))
        throw new UsageError(`--status must be a status code such as 429 or a class such as 4xx; got "${status}".`);
      if (method !== undefined && !["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].includes(method))
        throw new UsageError(`--method must be GET, POST, DELETE, HEAD, PUT or PATCH; got "${values.method}".`);
      if (path !== undefined && !path.startsWith("/"))
        throw new UsageError(`--path must start with / (a path below the API root, e.g. /streams); got "${path}".`);
      return {
        kind: "logs",
        filters: { status, method, path },
        ...apiOf(values, env, "", { live: true }),
      };
    }
    case "clock": {
      allowed("clock", ["base-url", "api-key"]);
      return {
        kind: "clock",
        command: clockCommandOf(rest),
        ...apiOf(values, env, "the test clock moves test mode only"),
      };
    }
    default:
      throw new UsageError(`unknown command "${name}"; the commands are ${COMMANDS}.`);
  }
}

/** `deliveries list|show|retry`'s arguments. */
function deliveriesCommandOf(
  rest: readonly string[],
  values: {
    status?: string | undefined;
    webhook?: string | undefined;
    stream?: string | undefined;
    limit?: string | undefined;
  },
): DeliveriesCommand {
  const [action, ...ids] = rest;
  if (action === "list") {
    if (ids.length > 0) throw new UsageError(`unexpected argument "${ids[0]}"; deliveries list takes options only.`);
    const status = values.status;
    if (status !== undefined && status !== "pending" && status !== "succeeded" && status !== "failed")
      throw new UsageError(`--status must be pending, succeeded or failed; got "${status}".`);
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw new UsageError(`--limit must be a whole number from 1 to 100; got "${values.limit}".`);
    return {
      action: "list",
      limit,
      ...(status ? { status } : {}),
      ...(values.webhook ? { webhookId: values.webhook } : {}),
      ...(values.stream ? { streamId: values.stream } : {}),
    };
  }
  if (action === "show" || action === "retry") {
    if (values.status ?? values.webhook ?? values.stream ?? values.limit)
      throw new UsageError(`deliveries ${action} takes the delivery id only.`);
    const [deliveryId, ...extra] = ids;
    if (!deliveryId || extra.length > 0) throw new UsageError(`deliveries ${action} needs one delivery id.`);
    return { action, deliveryId };
  }
  throw new UsageError(
    `deliveries needs list, show <delivery_id> or retry <delivery_id>${action === undefined ? "" : `, not "${action}"`}.`,
  );
}

/** `clock` (show) or `clock advance <duration>`. */
function clockCommandOf(rest: readonly string[]): ClockCommand {
  const [action, duration, ...extra] = rest;
  if (action === undefined) return { action: "show" };
  if (action !== "advance")
    throw new UsageError(`clock takes advance <duration> or nothing, not "${action}": clock advance 2h.`);
  if (duration === undefined) throw new UsageError("clock advance needs a duration, such as 90s, 30m, 2h or 7d.");
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" after the duration.`);
  const seconds = advanceSecondsOf(duration);
  if (seconds === null)
    throw new UsageError(
      `clock advance takes a duration from 1s to 7d, such as 90s, 30m, 2h or 7d; got "${duration}".`,
    );
  return { action: "advance", seconds };
}

function apiOf(
  values: { "base-url"?: string | undefined; "api-key"?: string | undefined },
  env: CliIo["env"],
  why: string,
  { live = false } = {},
): Api {
  const apiKey = values["api-key"] ?? env[API_KEY_ENV];
  if (!apiKey) throw new UsageError(`no API key: pass --api-key svc_test_… or set ${API_KEY_ENV}.`);
  if (live && /^svc_(live|test)_/.test(apiKey))
    return { apiKey, baseUrl: values["base-url"] ?? (env[BASE_URL_ENV] || DEFAULT_BASE_URL) };
  if (apiKey.startsWith("svc_live_")) {
    throw new UsageError(
      `refusing a live key (svc_live_…): ${why}. Pass a test key (svc_test_…), created in the dashboard like any other key.`,
    );
  }
  if (!apiKey.startsWith("svc_test_")) throw new UsageError("the API key must be a test key, starting svc_test_.");
  return { apiKey, baseUrl: values["base-url"] ?? (env[BASE_URL_ENV] || DEFAULT_BASE_URL) };
}

function eventsOf(list: string | undefined): WebhookEventType[] | undefined {
  if (list === undefined) return undefined;
  const events = list
    .split(",")
    .map((type) => type.trim())
    .filter((type) => type !== "");
  const unknown = events.find((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown !== undefined || events.length === 0) {
    throw new UsageError(
      `--events takes a comma-separated list of ${EVENT_TYPES.join(", ")}${unknown === undefined ? "" : `; "${unknown}" is none of them`}.`,
    );
  }
  return [...new Set(events)] as WebhookEventType[];
}

function assertHttpUrl(option: string, value: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== "http:" && protocol !== "https:")
    throw new UsageError(`${option} must be an http:// or https:// URL, got "${value}".`);
}

function assertSecret(secret: string): void {
  if (!/^whsec_\S+$/.test(secret))
    throw new UsageError(`--secret must be a signing secret starting whsec_, got "${secret.slice(0, 12)}…".`);
}

function isTriggerable(event: string | undefined): event is TriggerableEvent {
  return (TRIGGERABLE_EVENTS as readonly (string | undefined)[]).includes(event);
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
