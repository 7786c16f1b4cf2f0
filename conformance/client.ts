/**
 * The only way the suite talks HTTP: every request goes out through `send`, and every answer is
 * checked against openapi.yaml before anyone looks at it, then kept for coverage and parity.
 */
import { type Contract, responseViolations } from "./contract.ts";
import type { Target } from "./target.ts";

export interface Request {
  method: string;
  /** Relative to the API base (or the operator base with `internal`), query string included. */
  path: string;
  /** Bearer key; omitted or null sends no Authorization header. */
  key?: string | null;
  /** A raw Authorization header, for malformed ones; wins over `key`. */
  authorization?: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is (malformed JSON); wins over `body`. */
  rawBody?: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** An operator request (/admin/v1). */
  internal?: boolean;
  /**
   * An event stream is read until `until` holds of its text so far (by default, up to its first
   * message or comment); `opened` is called once its headers are in, when the stream has begun.
   */
  stream?: { until(text: string): boolean; opened?(): void };
}

export interface Exchange {
  request: Request;
  operationId: string | null;
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body; undefined when it is not JSON. */
  body: any;
  /** How the answer breaks the contract; empty when it conforms. */
  violations: string[];
}

export interface Bases {
  api: string;
  admin: string | null;
  adminToken: string | null;
}

/** Where the suite sends a target's public and operator requests. */
export function bases(target: Pick<Target, "apiBase" | "adminBase" | "adminToken">): Bases {
  return { api: target.apiBase, admin: target.adminBase, adminToken: target.adminToken };
}

/** An answer that takes longer than this is a hang, which the contract never allows. */
export const REQUEST_TIMEOUT_MS = 10_000;

export function createSender(contract: Contract, bases: Bases, record: (exchange: Exchange) => void = () => undefined) {
  return async function send(request: Request): Promise<Exchange> {
    const internal = request.internal === true;
    const base = internal ? bases.admin : bases.api;
    if (!base) throw new Error("this target has no operator API (set ADMIN_TOKEN for a URL target)");
    const authorization =
      request.authorization ??
      (internal ? `Bearer ${bases.adminToken}` : request.key ? `Bearer ${request.key}` : undefined);
    const hasBody = request.rawBody !== undefined || request.body !== undefined;
    const response = await fetch(base + request.path, {
      method: request.method,
      headers: {
        ...(authorization !== undefined ? { authorization } : {}),
        ...(hasBody ? { "content-type": request.contentType ?? "application/json" } : {}),
        ...request.headers,
      },
      body: request.rawBody ?? (request.body === undefined ? undefined : JSON.stringify(request.body)),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    }).catch((error: Error) => {
      const reason = error.name === "TimeoutError" ? `no answer within ${REQUEST_TIMEOUT_MS} ms` : error.message;
      throw new Error(`${request.method} ${request.path}: ${reason}`);
    });
    const text = await readText(response, request.stream);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const operation = contract.match(request.method, request.path, internal);
    const exchange: Exchange = {
      request,
      operationId: operation?.operationId ?? null,
      status: response.status,
      headers: response.headers,
      text,
      body,
      violations: operation
        ? responseViolations(operation, { status: response.status, headers: response.headers, text })
        : unknownPathViolations(request, response.status, body),
    };
    record(exchange);
    return exchange;
  };
}

export type Send = ReturnType<typeof createSender>;

/**
 * The answer's text; of an event stream (`GET /webhooks/listen`), which stays open until the
 * client leaves, what came until `stream.until` held (by default, up to the first message or
 * comment), then the connection is dropped.
 */
async function readText(response: Response, stream: Request["stream"]): Promise<string> {
  const eventStream = (response.headers.get("content-type") ?? "").startsWith("text/event-stream");
  if (!eventStream || !response.body) return response.text();
  const until = stream?.until ?? ((text: string) => text.includes("\n\n"));
  stream?.opened?.();
  const decoder = new TextDecoder();
  let text = "";
  const reader = response.body.getReader();
  try {
    while (!until(text)) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text;
}

/**
 * A request the contract names no operation for (a trailing slash, an unknown path or method) is
 * answered 404 with the error envelope, as every documented not-found is; anything else breaks it.
 */
function unknownPathViolations(request: Request, status: number, body: any): string[] {
  if (status === 404 && body?.error?.code === "not_found" && typeof body.error.message === "string") return [];
  return [
    `no operation in openapi.yaml for ${request.method} ${request.path}, and the answer is ${status}, not 404 not_found`,
  ];
}

/** `POST /streams → 400 missing_fields` */
export function describeExchange(exchange: Exchange): string {
  const code = exchange.body?.error?.code;
  return `${exchange.request.internal ? "[operator] " : ""}${exchange.request.method} ${exchange.request.path} → ${exchange.status}${code ? ` ${code}` : ""}`;
}

/** `POST /streams {"creator_id":…}` with the body (or a note on the key) cut short, to tell requests apart. */
export function requestLine(request: Request): string {
  const body = request.rawBody ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
  const auth =
    request.authorization !== undefined
      ? ` (Authorization: ${request.authorization.slice(0, 24)}…)`
      : request.key
        ? ""
        : " (no key)";
  return `${request.method} ${request.path}${body === undefined ? "" : ` ${body.length > 110 ? `${body.slice(0, 110)}…` : body}`}${auth}`;
}
