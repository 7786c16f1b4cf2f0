/**
 * `live-stream-hosting grade --url <receiver> --secret <whsec_…>`: sends a webhook receiver the
 * deliveries it must accept and those it must refuse, and scores its answers. Valid deliveries
 * must be answered 2xx within the time limit (duplicates and events out of order included);
 * forged, altered, stale or unsigned ones must get a non-2xx answer.
 */
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import { request as httpsRequest } from "node:https";
import type { WebhookEvent, WebhookEventType } from "./webhook-signature.ts";
import { webhookDeliveryHeaders } from "./webhooks.ts";

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
  const outOfOrder = randomUUID();
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
      deliveries: [signed(started)],
    },
    {
      name: "events out of order",
      expect: "accept",
      why: "stream.ended may arrive before its stream.started; both must be answered 2xx",
      deliveries: [signed(eventBody("stream.ended", outOfOrder)), signed(eventBody("stream.started", outOfOrder))],
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

/** Runs every case against `url`; resolves with the number failed. */
export async function grade(
  { url, secret, timeoutMs = DEFAULT_GRADE_TIMEOUT_MS }: { url: string; secret: string; timeoutMs?: number },
  io: GradeIo,
): Promise<number> {
  const now = io.now ?? Date.now;
  io.out(`Grading the webhook receiver at ${url} (answers within ${timeoutMs / 1000} s count)`);
  let passed = 0;
  let failed = 0;
  for (const test of cases(secret, Math.floor(now() / 1000))) {
    const answers: string[] = [];
    let ok = true;
    for (const delivery of test.deliveries) {
      const answer = await send(url, delivery, timeoutMs);
      const accepted = typeof answer === "number" && answer >= 200 && answer < 300;
      answers.push(typeof answer === "number" ? String(answer) : answer);
      if (test.expect === "accept" ? !accepted : accepted || typeof answer !== "number") ok = false;
    }
    const got = `answered ${answers.join(", then ")}`;
    if (ok) passed += 1;
    else failed += 1;
    io.out(`${ok ? "PASS" : "FAIL"}  ${test.name}: ${got}${ok ? "" : ` — ${test.why}`}`);
  }
  io.out(`${passed} passed, ${failed} failed`);
  return failed;
}

/**
 * POSTs one delivery; the status, or why there is none. A refused case needs an answer too: a
 * receiver that hangs or drops the connection is not refusing, it is failing.
 */
function send(url: string, { body, headers, slow = false }: Delivery, timeoutMs: number): Promise<number | string> {
  const target = new URL(url);
  const bytes = Buffer.from(body);
  return new Promise((resolve) => {
    const make = target.protocol === "https:" ? httpsRequest : request;
    const req = make(target, { method: "POST", headers: { ...headers, "content-length": String(bytes.length) } });
    const timer = setTimeout(() => {
      req.destroy();
      resolve(`no answer within ${timeoutMs / 1000} s`);
    }, timeoutMs);
    req.on("response", (response) => {
      response.resume();
      clearTimeout(timer);
      resolve(response.statusCode ?? 0);
    });
    req.on("error", (error: Error & { code?: string }) => {
      clearTimeout(timer);
      resolve(`no answer (${error.code ?? error.message})`);
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
