/**
 * `live-stream-hosting grade --url <receiver> --secret <whsec_…>`: sends a webhook receiver the
 * deliveries it must accept and those it must refuse, and scores its answers. Valid deliveries
 * must be answered 2xx within the time limit (duplicates and events out of order included);
 * forged, altered, stale or unsigned ones must get a non-2xx answer. The cases run at once, each
 * within the time limit, so a receiver that never answers is graded in about that long; the
 * deliveries of one case go in order. The report names the likely fault where the pattern of
 * answers shows it (the wrong secret, a re-serialised body, nothing listening).
 */
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import { request as httpsRequest } from "node:https";
import type { WebhookEvent, WebhookEventType } from "./webhook-signature.ts";
import { terminalSafeJson } from "./terminal-text.ts";
import { webhookDeliveryHeaders } from "./webhooks.ts";

/**
 * The header the mock (`npm run mock`) sets on every answer and a server never sends: `static`
 * (documented examples, no state: the commands that need a server's state and events stop there)
 * or `dynamic` (the server on data of its own: they work). grade, which needs a receiver, stops at
 * either.
 */
export const MOCK_HEADER = "x-mock";

/** The service's time limit for an answer, and so the grader's default. */
export const DEFAULT_GRADE_TIMEOUT_MS = 10_000;
/** How far outside the 5-minute signature window the stale and future cases sign. */
const OUT_OF_WINDOW_SEC = 600;
/** The slow sender: the body in this many pieces, this far apart. */
const SLOW_PIECES = 4;
const SLOW_GAP_MS = 500;

export interface GradeIo {
  out(line: string): void;
  now?: (() => number) | undefined;
}

interface Delivery {
  body: string;
  headers: Record<string, string>;
  slow?: boolean;
}

interface Case {
  name: string;
  /** The case is about verifying the raw body (see reserialisedHint). */
  rawBody?: boolean;
  /** What the receiver must answer: "accept" is 2xx in time, "refuse" anything else. */
  expect: "accept" | "refuse";
  why: string;
  deliveries: Delivery[];
}

/** A delivery body as the service builds it, for a made-up stream. */
function eventBody(
  type: WebhookEventType,
  streamId: string,
  id = `evt_${randomUUID().replace(/-/g, "")}`,
  at = new Date(),
): string {
  const status = type === "stream.started" ? "live" : type === "stream.ended" ? "ended" : "error";
  const event: WebhookEvent = {
    id,
    type,
    created_at: at.toISOString(),
    data: {
      stream_id: streamId,
      status,
      creator_id: "avt_Qfmm3FkkaQM0",
      platform: "youtube",
      vertical: "live-commerce",
    },
  };
  return JSON.stringify(event);
}

function cases(secret: string, nowSec: number): Case[] {
  const signed = (body: string, at = nowSec, key = secret): Delivery => ({
    body,
    headers: webhookDeliveryHeaders(body, key, at),
  });
  const stream = randomUUID();
  const started = eventBody("stream.started", stream);
  const duplicate = signed(eventBody("stream.started", randomUUID()));
  const outOfOrder = randomUUID();
  const formatted = formattedBody(eventBody("stream.ended", randomUUID()));
  const tampered = signed(eventBody("stream.ended", randomUUID()));
  const unsigned = signed(eventBody("stream.started", randomUUID()));
  delete unsigned.headers["x-service-signature"];
  return [
    {
      name: "valid stream.started",
      expect: "accept",
      why: "a valid delivery must be answered 2xx",
      deliveries: [signed(started)],
    },
    {
      name: "valid stream.ended",
      expect: "accept",
      why: "a valid delivery must be answered 2xx",
      deliveries: [signed(eventBody("stream.ended", stream))],
    },
    {
      name: "valid stream.error",
      expect: "accept",
      why: "a valid delivery must be answered 2xx",
      deliveries: [signed(eventBody("stream.error", randomUUID()))],
    },
    {
      name: "the same event id twice",
      expect: "accept",
      why: "a repeated event (a retry, or a copy during a secret rotation) must be answered 2xx again, and handled once",
      deliveries: [duplicate, duplicate],
    },
    {
      name: "events out of order",
      expect: "accept",
      why: "stream.ended may arrive before its stream.started; both must be answered 2xx",
      deliveries: [signed(eventBody("stream.ended", outOfOrder)), signed(eventBody("stream.started", outOfOrder))],
    },
    {
      name: "body with spaces and escapes",
      rawBody: true,
      expect: "accept",
      why: "the signature covers the body's bytes as sent: verify the raw body before parsing it, never JSON.stringify(JSON.parse(body))",
      deliveries: [signed(formatted)],
    },
    {
      name: "slow-reading sender",
      expect: "accept",
      why: "a body that arrives slowly must be read whole and answered 2xx",
      deliveries: [{ ...signed(eventBody("stream.started", randomUUID())), slow: true }],
    },
    {
      name: "tampered body",
      expect: "refuse",
      why: "a body changed after signing must be refused: verify the signature over the raw body",
      deliveries: [{ ...tampered, body: tampered.body.replace('"status":"ended"', '"status":"live"') }],
    },
    {
      name: "wrong signature",
      expect: "refuse",
      why: "a delivery signed with another secret must be refused",
      deliveries: [
        signed(eventBody("stream.started", randomUUID()), nowSec, `whsec_${randomUUID().replace(/-/g, "")}`),
      ],
    },
    {
      name: "timestamp 10 minutes old",
      expect: "refuse",
      why: "a signature older than 5 minutes must be refused (a replay)",
      deliveries: [signed(eventBody("stream.started", randomUUID()), nowSec - OUT_OF_WINDOW_SEC)],
    },
    {
      name: "timestamp 10 minutes ahead",
      expect: "refuse",
      why: "a signature more than 5 minutes in the future must be refused",
      deliveries: [signed(eventBody("stream.started", randomUUID()), nowSec + OUT_OF_WINDOW_SEC)],
    },
    {
      name: "no X-Service-Signature",
      expect: "refuse",
      why: "an unsigned delivery must be refused",
      deliveries: [unsigned],
    },
  ];
}

/**
 * The same event, written as JSON may be written: indented with spaces, tabs and line breaks, every
 * `.` and `-` in its strings escaped (`\u002e`, `\u002d`). Parsed, it is the same event; written
 * again by a JSON library it is other bytes, whose signature differs. (The payload's fields are
 * ids, enums and timestamps, all ASCII: the escapes are how text outside ASCII would arrive too.)
 */
function formattedBody(body: string): string {
  return JSON.stringify(JSON.parse(body), null, "\t ")
    .replace(/"((?:[^"\\]|\\.)*)"/g, (string) => string.replace(/\./g, "\\u002e").replace(/-/g, "\\u002d"))
    .replace(/": /g, '" :  ');
}

/** One delivery's outcome: an HTTP status, or why there is none (a time-out or a connection error). */
type Answer = { status: number; mock: boolean } | { failure: string; connection: boolean };

export interface CaseResult {
  name: string;
  expect: "accept" | "refuse";
  ok: boolean;
  /** Each delivery's answer: `HTTP 204`, `no answer within 10 s`, `connection failed (ECONNREFUSED)`. */
  answers: string[];
  why: string;
}

export interface GradeReport {
  url: string;
  timeout_seconds: number;
  passed: number;
  failed: number;
  cases: CaseResult[];
  /** What the pattern of answers says is wrong, most likely first. */
  hints: string[];
}

export interface GradeResult {
  failed: number;
  /** The URL answered as the mock (its X-Mock header): nothing was graded. */
  mock: boolean;
}

/** Runs every case against `url`, prints the report (lines, or one JSON document with `json`), and resolves with the number failed. */
export async function grade(
  {
    url,
    secret,
    timeoutMs = DEFAULT_GRADE_TIMEOUT_MS,
    json = false,
  }: { url: string; secret: string; timeoutMs?: number; json?: boolean },
  io: GradeIo,
): Promise<GradeResult> {
  const now = io.now ?? Date.now;
  if (!json) io.out(`Grading the webhook receiver at ${url} (answers within ${timeoutMs / 1000} s count)`);
  const all = cases(secret, Math.floor(now() / 1000));
  const answered = await Promise.all(
    all.map(async (test) => {
      const answers: Answer[] = [];
      for (const delivery of test.deliveries) answers.push(await send(url, delivery, timeoutMs));
      return answers;
    }),
  );
  if (answered.flat().some((answer) => "status" in answer && answer.mock)) return { failed: 0, mock: true };
  const results = all.map((test, index): CaseResult => {
    const answers = answered[index]!;
    const accepted = (answer: Answer) => "status" in answer && answer.status >= 200 && answer.status < 300;
    const ok =
      test.expect === "accept"
        ? answers.every(accepted)
        : answers.every((answer) => "status" in answer && !accepted(answer));
    return { name: test.name, expect: test.expect, ok, answers: answers.map(describe), why: test.why };
  });
  const report: GradeReport = {
    url,
    timeout_seconds: timeoutMs / 1000,
    passed: results.filter((result) => result.ok).length,
    failed: results.filter((result) => !result.ok).length,
    cases: results,
    hints: hints(all, answered, results, url),
  };
  if (json) io.out(terminalSafeJson(report));
  else for (const line of reportLines(report, answered)) io.out(line);
  return { failed: report.failed, mock: false };
}

function describe(answer: Answer): string {
  return "status" in answer ? `HTTP ${answer.status}` : answer.failure;
}

/**
 * One line per case, except that cases which failed only because the connection failed the same
 * way are one line together (a receiver that is not running fails every case alike).
 */
function reportLines(report: GradeReport, answered: Answer[][]): string[] {
  const lines: string[] = [];
  const grouped = new Map<string, string[]>();
  report.cases.forEach((result, index) => {
    const answers = answered[index]!;
    const failure = answers.every((answer) => "connection" in answer && answer.connection)
      ? describe(answers[0]!)
      : undefined;
    if (!result.ok && failure && answers.every((answer) => describe(answer) === failure)) {
      grouped.set(failure, [...(grouped.get(failure) ?? []), result.name]);
      return;
    }
    const got = `answered ${result.answers.join(", then ")}`.replace(/^answered (no answer|connection)/, "$1");
    lines.push(`${result.ok ? "PASS" : "FAIL"}  ${result.name}: ${got}${result.ok ? "" : ` — ${result.why}`}`);
  });
  for (const [failure, names] of grouped) {
    const which = names.length === report.cases.length ? "every case" : names.join(", ");
    lines.push(`FAIL  ${names.length} case${names.length === 1 ? "" : "s"} (${which}): ${failure}`);
  }
  for (const hint of report.hints) lines.push(`Hint: ${hint}`);
  lines.push(`${report.passed} passed, ${report.failed} failed`);
  return lines;
}

/** What the answers say is wrong, beyond each case's own reason. */
function hints(all: Case[], answered: Answer[][], results: CaseResult[], url: string): string[] {
  const found: string[] = [];
  const statusOf = (answer: Answer) => ("status" in answer ? answer.status : undefined);
  const connection = answered.flat().find((answer) => "connection" in answer && answer.connection);
  if (connection && answered.flat().every((answer) => "connection" in answer && answer.connection))
    found.push(
      `nothing answered at ${url} (${describe(connection)}): is your receiver running, on that port and path?`,
    );
  // Every correctly signed delivery refused with a client error, every forged one refused too:
  // the receiver works but verifies with another secret.
  const signedValid = all.flatMap((test, index) => (test.expect === "accept" ? answered[index]! : []));
  if (signedValid.length > 0 && signedValid.every((answer) => (statusOf(answer) ?? 0) >= 400)) {
    found.push(
      "the secret does not match: every correctly signed delivery was refused. Pass --secret the whsec_… your receiver verifies with (the webhook's secret, or the one listen printed).",
    );
    return found;
  }
  const compact = results.filter((result, index) => result.expect === "accept" && !all[index]!.rawBody);
  const raw = results.filter((result, index) => all[index]!.rawBody);
  if (compact.every((result) => result.ok) && raw.some((result) => !result.ok))
    found.push(
      "compact bodies pass but a body with spaces and escapes fails: your receiver verifies a re-serialised body; verify the raw bytes as received.",
    );
  return found;
}

/**
 * POSTs one delivery; its answer. A refused case needs an answer too: a receiver that hangs or
 * drops the connection is not refusing, it is failing.
 */
function send(url: string, { body, headers, slow = false }: Delivery, timeoutMs: number): Promise<Answer> {
  const target = new URL(url);
  const bytes = Buffer.from(body);
  return new Promise((resolve) => {
    const make = target.protocol === "https:" ? httpsRequest : request;
    const req = make(target, { method: "POST", headers: { ...headers, "content-length": String(bytes.length) } });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ failure: `no answer within ${timeoutMs / 1000} s`, connection: false });
    }, timeoutMs);
    req.on("response", (response) => {
      response.resume();
      clearTimeout(timer);
      resolve({ status: response.statusCode ?? 0, mock: response.headers[MOCK_HEADER] !== undefined });
    });
    req.on("error", (error: Error & { code?: string }) => {
      clearTimeout(timer);
      resolve({ failure: `connection failed (${error.code ?? error.message})`, connection: true });
    });
    if (!slow) return void req.end(bytes);
    // The body in pieces, spaced out: a receiver must wait for the whole of it.
    const size = Math.ceil(bytes.length / SLOW_PIECES);
    let at = 0;
    const next = () => {
      if (req.destroyed) return;
      const piece = bytes.subarray(at, at + size);
      at += size;
      if (at >= bytes.length) return void req.end(piece);
      req.write(piece);
      setTimeout(next, SLOW_GAP_MS);
    };
    next();
  });
}
