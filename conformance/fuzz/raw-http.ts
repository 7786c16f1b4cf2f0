/**
 * HTTP/1.x written byte for byte on a socket of its own, and the answers read back the same
 * way: fetch and Node's client refuse to send what the fuzzer needs to send (two Host headers,
 * a Content-Length that lies, `GET *`, chunked garbage, no Host at all).
 */
import { connect } from "node:net";

export interface RawRequest {
  method: string;
  /** The request-target as written on the request line: `/api/v1/streams?x=1`, `*`, `host:443`. */
  target: string;
  version: "HTTP/1.1" | "HTTP/1.0";
  /** In order, duplicates kept, Host and Content-Length included: nothing is added on the way. */
  headers: ReadonlyArray<readonly [string, string]>;
  /** Written as is after the blank line. */
  body: Buffer;
  /** Bytes written instead of all of the above: what no request line describes (a TLS hello). */
  raw?: Buffer;
}

export interface RawResponse {
  status: number;
  /** In order, names lower-cased, duplicates kept. */
  headers: ReadonlyArray<readonly [string, string]>;
  body: Buffer;
  text: string;
  /** The connection closed before the whole body announced arrived. */
  truncated: boolean;
  /** The first value of `name` (lower case), if any. */
  header(name: string): string | undefined;
}

export interface RawExchange {
  /** Final answers in order (100 Continue and other interim answers left out). */
  responses: RawResponse[];
  /** The server closed the connection. */
  closed: boolean;
  /** No (complete) answer within the deadline. */
  timedOut: boolean;
  /** Bytes received that do not parse as an HTTP response. */
  garbage: string | null;
  ms: number;
}

export interface SendOptions {
  /** Give up waiting after this long. */
  deadlineMs: number;
  /** Read every answer until the server closes, not only the first: for requests that leave bytes behind them. */
  untilClose?: boolean;
}

/** The request as it goes on the wire. */
export function serialize(request: RawRequest): Buffer {
  if (request.raw) return request.raw;
  const head = [
    `${request.method} ${request.target} ${request.version}`,
    ...request.headers.map(([name, value]) => `${name}: ${value}`),
    "",
    "",
  ].join("\r\n");
  return Buffer.concat([Buffer.from(head, "latin1"), request.body]);
}

/** The request as a person reads it: the head as written, the body cut short. */
export function describeRaw(request: RawRequest, bodyChars = 160): string {
  if (request.raw) return JSON.stringify(request.raw.toString("latin1").slice(0, 300));
  const head = serialize({ ...request, body: Buffer.alloc(0) })
    .toString("latin1")
    .trimEnd();
  const body = request.body.toString("latin1");
  const shown =
    body.length > bodyChars
      ? `${JSON.stringify(body.slice(0, bodyChars))}… (${request.body.length} bytes)`
      : JSON.stringify(body);
  return `${head
    .split("\r\n")
    .map((line) => (line.length > 200 ? `${line.slice(0, 200)}… (${line.length} chars)` : line))
    .join("\n    ")}${request.body.length ? `\n    body ${shown}` : ""}`;
}

/** `open`: an event stream still open, whose later bytes are more of the same answer. */
type Parsed =
  | { response: RawResponse; interim: boolean; rest: Buffer; open: boolean }
  | { incomplete: true }
  | { garbage: string };

/** `bodyless`: the answer to a HEAD, which has headers only whatever they announce. */
function parseOne(buffer: Buffer, bodyless: boolean, closed: boolean): Parsed {
  const end = buffer.indexOf("\r\n\r\n");
  if (end === -1)
    return closed && buffer.length ? { garbage: buffer.toString("latin1").slice(0, 200) } : { incomplete: true };
  const [statusLine = "", ...lines] = buffer.subarray(0, end).toString("latin1").split("\r\n");
  const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
  if (!match) return { garbage: statusLine.slice(0, 200) };
  const status = Number(match[1]);
  const headers = lines.map((line) => {
    const colon = line.indexOf(":");
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const;
  });
  const header = (name: string) => headers.find(([candidate]) => candidate === name)?.[1];
  let rest = buffer.subarray(end + 4);
  let body: Buffer;
  let truncated = false;
  // An event stream (GET /webhooks/listen) stays open until the client leaves: its answer is
  // what came once something came.
  const openStream = !closed && /^text\/event-stream\b/i.test(header("content-type") ?? "");
  if (bodyless || status < 200 || status === 204 || status === 304) {
    body = Buffer.alloc(0);
  } else if (/chunked/i.test(header("transfer-encoding") ?? "")) {
    const chunks: Buffer[] = [];
    for (;;) {
      const line = rest.indexOf("\r\n");
      const size = line === -1 ? Number.NaN : Number.parseInt(rest.subarray(0, line).toString("latin1"), 16);
      if (line !== -1 && Number.isNaN(size))
        return { garbage: `a chunk size of ${JSON.stringify(rest.subarray(0, line).toString("latin1").slice(0, 40))}` };
      if (line === -1 || rest.length < line + 2 + size + 2) {
        if (openStream && chunks.length > 0) break;
        if (!closed) return { incomplete: true };
        truncated = true;
        rest = Buffer.alloc(0);
        break;
      }
      chunks.push(rest.subarray(line + 2, line + 2 + size));
      rest = rest.subarray(line + 2 + size + 2);
      if (size === 0) break;
    }
    body = Buffer.concat(chunks);
  } else if (header("content-length") !== undefined) {
    const length = Number(header("content-length"));
    if (rest.length < length && !closed) return { incomplete: true };
    truncated = rest.length < length;
    body = rest.subarray(0, length);
    rest = rest.subarray(body.length);
  } else {
    // Delimited by the close of the connection.
    if (!closed && !(openStream && rest.length > 0)) return { incomplete: true };
    body = rest;
    rest = Buffer.alloc(0);
  }
  const response: RawResponse = { status, headers, body, text: body.toString("utf8"), truncated, header };
  return { response, interim: status < 200, rest, open: openStream && !bodyless };
}

/** Sends `request` on a new connection and reads what comes back (see SendOptions). */
export function sendRaw(
  port: number,
  request: RawRequest,
  { deadlineMs, untilClose = false }: SendOptions,
): Promise<RawExchange> {
  const started = performance.now();
  const bodyless = request.method === "HEAD";
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const responses: RawResponse[] = [];
    let buffer: Buffer = Buffer.alloc(0);
    let closed = false;
    let garbage: string | null = null;
    let settled = false;
    const finish = (timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ responses, closed, timedOut, garbage, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish(true), deadlineMs);
    let streaming = false;
    const drain = () => {
      // The rest of an open event stream answers nothing new.
      if (streaming) buffer = Buffer.alloc(0);
      while (buffer.length && garbage === null) {
        // Only the first answer is to the HEAD; any later one answers the bytes after it.
        const parsed = parseOne(buffer, bodyless && responses.length === 0, closed);
        if ("incomplete" in parsed) return;
        if ("garbage" in parsed) {
          garbage = parsed.garbage;
          return;
        }
        buffer = parsed.rest;
        if (!parsed.interim) responses.push(parsed.response);
        if (parsed.open) {
          streaming = true;
          buffer = Buffer.alloc(0);
        }
      }
    };
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      drain();
      if (garbage !== null || (responses.length > 0 && !untilClose)) finish(false);
    });
    socket.on("close", () => {
      closed = true;
      drain();
      finish(false);
    });
    // A reset after the answer is normal (the server closed while bytes were in flight).
    socket.on("error", () => undefined);
    socket.on("connect", () => socket.write(serialize(request)));
  });
}
