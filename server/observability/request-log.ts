/**
 * The request log's writer: every request to /api/v1 made with a real key of a brand (guard.ts sets
 * `loggedKey`, refusals included) is noted when its answer is finished (http/observe-requests.ts)
 * and written to the database later, in batches, by a timer: one multi-row INSERT per batch
 * (store/request-log.ts). What a request pays is a few property reads and a push onto an array.
 *
 * Bounded, and never in a request's way: the queue holds at most 10,000 entries and 32 MiB of
 * bodies, one brand at most a quarter of it; an entry that does not fit, or whose batch the
 * database refuses (down, locked, restarting), is dropped and counted (`request_log_dropped_total`
 * in /metrics), never retried and never an error of any request. Bodies are redacted, cut and
 * serialised at the batch's write, off the request path: every property the contract marks
 * `x-sensitive` (contract/sensitive.ts), then any key- or secret-like text, then cut to 10,240 bytes.
 * The `Authorization` header is never read.
 */
import type { Express, Response } from "express";
import type { Contract } from "../../contract/contract.ts";
import { API_BASE } from "../../contract/operations.ts";
import {
  contractSecrets,
  type OperationSecrets,
  redactBody,
  redactSecretLike,
  type SensitivePaths,
} from "../../contract/sensitive.ts";
import { atMostCharacters } from "../domain/text.ts";
import { TimeOrderedIds } from "../domain/time-ordered-id.ts";
import { clientAddress } from "../http/client-address.ts";
import { operationOf } from "../http/operation-routes.ts";
import type { KnownKey } from "../services/auth.ts";
import type { Queryable } from "../store/database.ts";
import { withoutDatabaseBudget } from "../store/request-budget.ts";
import { insertRequestLogRows, type RequestLogRow } from "../store/request-log.ts";

/** A body is stored cut to this many bytes of UTF-8 (never inside a character). */
export const LOGGED_BODY_BYTES = 10_240;
/** A path or query is stored cut to this many characters. */
const LOGGED_TEXT_CHARACTERS = 2_048;
const IDEMPOTENCY_KEY_CHARACTERS = 255;

export type DropReason = "queue_full" | "brand_share" | "write_failed";

export interface RequestLogLimits {
  /** How often the queue is written (ms). */
  flushIntervalMs: number;
  /** Rows per INSERT; a queue this long is written at once. */
  batchRows: number;
  /** Entries the queue holds at most. */
  queuedEntries: number;
  /** Bytes of bodies the queue holds at most. */
  queuedBytes: number;
  /** Entries one brand holds in the queue at most. */
  brandEntries: number;
}

export const REQUEST_LOG_LIMITS: RequestLogLimits = {
  flushIntervalMs: 500,
  batchRows: 200,
  queuedEntries: 10_000,
  queuedBytes: 32 * 1024 * 1024,
  brandEntries: 2_500,
};

export interface RequestLogOptions {
  db: Queryable;
  contract: Contract;
  limits?: Partial<RequestLogLimits>;
  /** Long bodies deflated before they are sent (the embedded database; store/request-log.ts, encodeBody). */
  compressBodies?: boolean;
  /** Entries dropped, and why (the metrics count them). */
  onDropped?(reason: DropReason, count: number): void;
  /** Entries written. */
  onWritten?(count: number): void;
  /** A batch that could not be written (its entries are dropped): for the logs. */
  onError?(error: unknown): void;
}

/** What a finished request leaves for the log: references only; nothing is serialised yet. */
interface Pending {
  key: KnownKey & { at: Date };
  requestId: string;
  method: string;
  url: string;
  status: number;
  errorCode: string | undefined;
  durationMs: number;
  clientAddress: string;
  idempotencyKey: string | undefined;
  replayed: boolean;
  operationId: string | undefined;
  body: Buffer | undefined;
  answer: string | undefined;
  bytes: number;
}

/** Per entry, what the queue counts beside its bodies. */
const ENTRY_OVERHEAD_BYTES = 512;

/**
 * For a streamed answer (http/streamed-json.ts): keeps what is written, a little past what the log
 * stores, when the request is logged.
 */
export function keepAnswerText(res: Response, chunk: string): void {
  const { locals } = res;
  if (!locals.loggedKey) return;
  const kept = locals.answerBody ?? "";
  if (kept.length > LOGGED_BODY_BYTES) return;
  locals.answerBody = kept + chunk;
}

/**
 * Keeps the text of every answer sent with `res.send` (which `res.json` calls with its JSON) for a
 * logged request: the app's own `send`, wrapped once, rather than a wrapper made per request.
 */
export function captureAnswers(app: Express): void {
  const send = app.response.send;
  app.response.send = function sendKept(this: Response, body?: unknown) {
    const { locals } = this;
    if (locals.loggedKey !== undefined && typeof body === "string" && locals.answerBody === undefined)
      locals.answerBody = body;
    return send.call(this, body);
  } as typeof send;
}

/** `text` cut to at most `max` bytes of UTF-8, never inside a character. */
export function cutUtf8(text: string, max: number): { text: string; truncated: boolean } {
  // A character is at most 3 bytes per UTF-16 unit: short text needs no encoding to know.
  if (text.length * 3 <= max) return { text, truncated: false };
  // Counting the bytes is cheaper than encoding them, and most answers fit.
  if (text.length <= max && Buffer.byteLength(text, "utf8") <= max) return { text, truncated: false };
  const target = new Uint8Array(max);
  const { read } = new TextEncoder().encodeInto(text, target);
  return read >= text.length ? { text, truncated: false } : { text: text.slice(0, read), truncated: true };
}

/**
 * A body as stored: redacted by the contract's sensitive paths when it is JSON (and has any), then
 * of key- and secret-like text, then cut. Text that is not JSON is kept as text, redacted alike.
 */
export function storedBody(
  text: string | undefined,
  paths: SensitivePaths | null,
): { text: string | null; truncated: boolean } {
  if (text === undefined) return { text: null, truncated: false };
  let shown = text;
  if (paths !== null) {
    try {
      const value: unknown = JSON.parse(text);
      const redacted = redactBody(value, paths);
      if (redacted !== value) shown = JSON.stringify(redacted);
    } catch {
      // Not JSON (a body refused as malformed, a streamed answer cut short): the text as it is.
    }
  } else if (shown.length > LOGGED_BODY_BYTES + 64) {
    // Nothing to find by schema: only the part kept is scanned (a secret across the cut is still
    // found: 64 characters more than kept are scanned).
    shown = shown.slice(0, LOGGED_BODY_BYTES + 64);
    const cut = cutUtf8(redactSecretLike(shown), LOGGED_BODY_BYTES);
    return { text: cut.text, truncated: true };
  }
  return cutUtf8(redactSecretLike(shown), LOGGED_BODY_BYTES);
}

/** The path and query of a request to the public API, relative to its root, cut and redacted. */
function pathAndQuery(url: string): { path: string; query: string | null } {
  const mark = url.indexOf("?");
  const full = mark === -1 ? url : url.slice(0, mark);
  const relative = full.startsWith(API_BASE) ? full.slice(API_BASE.length) : full;
  const query = mark === -1 || mark === url.length - 1 ? null : url.slice(mark + 1);
  return {
    path: atMostCharacters(redactSecretLike(relative === "" ? "/" : relative), LOGGED_TEXT_CHARACTERS),
    query: query === null ? null : atMostCharacters(redactSecretLike(query), LOGGED_TEXT_CHARACTERS),
  };
}

export class RequestLogWriter {
  readonly #db: Queryable;
  readonly #secrets: ReadonlyMap<string, OperationSecrets>;
  readonly #limits: RequestLogLimits;
  readonly #options: RequestLogOptions;
  readonly #ids = new TimeOrderedIds();
  #queue: Pending[] = [];
  #queuedBytes = 0;
  readonly #perBrand = new Map<string, number>();
  #flushing: Promise<void> | undefined;
  #soon = false;
  readonly #timer: NodeJS.Timeout;

  constructor(options: RequestLogOptions) {
    this.#options = options;
    this.#db = options.db;
    this.#limits = { ...REQUEST_LOG_LIMITS, ...options.limits };
    // Every operation's sensitive paths, found once.
    this.#secrets = contractSecrets(options.contract.operations.all);
    // Made here, outside any request: the writes are charged to no request's database time.
    this.#timer = withoutDatabaseBudget(() =>
      setInterval(() => void this.flush(), this.#limits.flushIntervalMs).unref(),
    );
  }

  /** Entries waiting to be written. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Notes a finished request whose `loggedKey` the guard set; never throws, never waits. */
  record(res: Response, durationMs: number): void {
    const { locals } = res;
    const key = locals.loggedKey;
    if (!key) return;
    const body = locals.rawBody;
    const answer = locals.answerBody;
    const bytes = ENTRY_OVERHEAD_BYTES + (body?.length ?? 0) + (answer?.length ?? 0);
    const limits = this.#limits;
    if (this.#queue.length >= limits.queuedEntries || this.#queuedBytes + bytes > limits.queuedBytes)
      return this.#drop("queue_full", 1);
    const brandQueued = this.#perBrand.get(key.brandId) ?? 0;
    if (brandQueued >= limits.brandEntries) return this.#drop("brand_share", 1);
    this.#perBrand.set(key.brandId, brandQueued + 1);
    this.#queuedBytes += bytes;
    const req = res.req;
    const idempotencyKey = req.headers["idempotency-key"];
    this.#queue.push({
      key,
      requestId: locals.requestId ?? "",
      method: locals.head ? "HEAD" : req.method,
      url: req.originalUrl,
      status: res.statusCode,
      errorCode: locals.errorCode,
      durationMs,
      clientAddress: clientAddress(req),
      idempotencyKey: typeof idempotencyKey === "string" ? idempotencyKey : undefined,
      replayed: res.getHeader("Idempotent-Replayed") === "true",
      operationId: operationOf(res)?.operationId,
      body,
      answer,
      bytes,
    });
    if (this.#queue.length >= limits.batchRows && !this.#soon) {
      this.#soon = true;
      withoutDatabaseBudget(() => setImmediate(() => void this.flush()));
    }
  }

  /** Writes what is queued, a batch at a time; a batch that fails is dropped. Never rejects. */
  flush(): Promise<void> {
    this.#flushing ??= this.#drain().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }

  async #drain(): Promise<void> {
    this.#soon = false;
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#limits.batchRows);
      for (const entry of batch) {
        this.#queuedBytes -= entry.bytes;
        const left = (this.#perBrand.get(entry.key.brandId) ?? 1) - 1;
        if (left > 0) this.#perBrand.set(entry.key.brandId, left);
        else this.#perBrand.delete(entry.key.brandId);
      }
      const rows = this.#rowsOf(batch);
      try {
        await insertRequestLogRows(this.#db, rows, { compressBodies: this.#options.compressBodies ?? true });
        this.#options.onWritten?.(rows.length);
      } catch (error) {
        this.#drop("write_failed", rows.length);
        this.#report(error);
        // The next tick tries again with what has come meanwhile.
        return;
      }
    }
  }

  #rowsOf(batch: readonly Pending[]): RequestLogRow[] {
    const ids = this.#ids.next(batch.map((entry) => entry.key.at.getTime()));
    const rows: RequestLogRow[] = [];
    batch.forEach((entry, index) => {
      try {
        rows.push(this.#rowOf(entry, ids[index]!));
      } catch (error) {
        this.#drop("write_failed", 1);
        this.#report(error);
      }
    });
    return rows;
  }

  #rowOf(entry: Pending, { id, ms }: { id: string; ms: number }): RequestLogRow {
    const secrets = entry.operationId === undefined ? undefined : this.#secrets.get(entry.operationId);
    const request = storedBody(entry.body?.toString("utf8"), secrets?.request ?? null);
    const response = storedBody(entry.answer, secrets?.responses.get(entry.status) ?? null);
    const { path, query } = pathAndQuery(entry.url);
    const { key } = entry;
    return {
      brandId: key.brandId,
      mode: key.mode,
      id,
      requestId: entry.requestId,
      createdAt: new Date(ms),
      keyId: key.keyId,
      keyName: key.name,
      keyLastFour: key.lastFour,
      method: entry.method,
      path,
      query,
      status: entry.status,
      errorCode: entry.errorCode ?? null,
      durationMs: Math.round(entry.durationMs * 10) / 10,
      clientAddress: entry.clientAddress,
      idempotencyKey:
        entry.idempotencyKey === undefined
          ? null
          : atMostCharacters(redactSecretLike(entry.idempotencyKey), IDEMPOTENCY_KEY_CHARACTERS),
      replayed: entry.replayed,
      requestBody: request.text,
      requestBodyTruncated: request.truncated,
      responseBody: response.text,
      responseBodyTruncated: response.truncated,
    };
  }

  #drop(reason: DropReason, count: number): void {
    if (count > 0) this.#options.onDropped?.(reason, count);
  }

  #report(error: unknown): void {
    try {
      this.#options.onError?.(error);
    } catch {
      // Reporting must not stop the writer.
    }
  }
}
