import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { ERRORS } from "../domain/errors.ts";
import { LARGEST_BODY_BYTES } from "./body-limit.ts";
import { newRequestId, requestIdFor } from "./request-id.ts";

export interface TransportLimits {
  /** Time to receive a whole request, body included. */
  requestTimeoutMs: number;
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
}

/**
 * The transport's hold on one response, for a route that keeps its response open (an event
 * stream): such a response is not a request in flight (the delivery worker backs off while
 * requests are in flight, and a graceful stop would wait for it), and it is told to finish when
 * the server stops.
 */
const streamingHooks = new WeakMap<ServerResponse, StreamingHooks>();
type StreamingHooks = { markStreaming(res: ServerResponse, stop: () => void): void };

/**
 * Marks `res` as a long-lived stream (see streamingHooks): `stop` is called once when the server
 * begins to stop, at once when it already has. No-op for a response this transport did not make.
 */
export function markStreaming(res: ServerResponse, stop: () => void): void {
  streamingHooks.get(res)?.markStreaming(res, stop);
}

export interface HttpServer {
  server: Server;
  /** Hands every request to `app` from now on (the server may listen before the app is made). */
  serve(app: RequestListener): void;
  /** Requests received and not yet answered. */
  inFlight(): number;
  /**
   * Stops accepting connections and waits for the requests in flight (and those still arriving on
   * connections already open); past `deadlineMs` the connections still open are cut. Resolves
   * once every connection is closed, with the requests answered meanwhile and those cut.
   */
  close(deadlineMs: number): Promise<{ answered: number; cut: number }>;
}

/**
 * What Node's parser and time-outs reject, answered in the contract's envelope with a status the
 * contract documents (400 `invalid_fields`): 408 and 431 are in no operation's responses.
 */
function rejection(code: string | undefined, limits: TransportLimits): string {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return `The request did not arrive in full within the server's time-out (${limits.headersTimeoutMs} ms for the headers, ${limits.requestTimeoutMs} ms for the whole request).`;
    case "HPE_HEADER_OVERFLOW":
      return "The request's headers are too large (at most 16 KB in all).";
    default:
      return `Malformed HTTP request (${code ?? "unreadable"}).`;
  }
}

type EdgeCode = "invalid_fields" | "not_found";
const REASONS: Record<EdgeCode, string> = { invalid_fields: "Bad Request", not_found: "Not Found" };

/** A minimal HTTP/1.1 answer written on the socket itself: Express never saw the request. */
function rawAnswer(code: EdgeCode, message: string, requestId = newRequestId()): string {
  const body = JSON.stringify({ error: { code, message } });
  return [
    `HTTP/1.1 ${ERRORS[code].status} ${REASONS[code]}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `Request-Id: ${requestId}`,
    "Connection: close",
    "",
    body,
  ].join("\r\n");
}

/**
 * A 400 in the error envelope for a request parsed but refused before the app (see hostProblem),
 * and the connection closed after it: what else was sent on it is not trusted.
 */
function answerInEnvelope(req: IncomingMessage, res: ServerResponse, message: string): void {
  const body = JSON.stringify({ error: { code: "invalid_fields", message } });
  res.shouldKeepAlive = false;
  res.writeHead(ERRORS.invalid_fields.status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    "Request-Id": requestIdFor(req.headers["x-request-id"]),
  });
  res.end(body);
}

/**
 * A host name or address with an optional port (RFC 9110 §7.2, RFC 3986 §3.2.2), without a
 * comma: two Host headers reach here joined by one (`joinDuplicateHeaders`).
 */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~%!$&'()*+;=-]*)(?::[0-9]*)?$/;

/**
 * Why RFC 9112 §3.2 requires a 400 for this request, or null: an HTTP/1.1 request without a Host
 * header, with more than one, or with one that names no host. Node's own check
 * (`requireHostHeader`) answers an empty 400 without a Request-Id, and lets the others through.
 */
function hostProblem(req: IncomingMessage): string | null {
  const { host } = req.headers;
  const http10 = req.httpVersionMajor === 1 && req.httpVersionMinor === 0;
  if (host === undefined) return http10 ? null : "The request has no Host header (HTTP/1.1 requires one).";
  if (host.includes(",")) return "The request has more than one Host header.";
  if (!HOST_VALUE.test(host)) return "The Host header is not a host name or address with an optional port.";
  return null;
}

/**
 * How long a connection closing with bytes unread still reads (and drops) what its client sends:
 * a connection closed with bytes unread is reset by the kernel, and a reset can cut short an
 * answer still on its way, or drop it whole. Apache and nginx call this a lingering close.
 */
const LINGER_MS = 2_000;

/** Ends `socket` (after what was written) and reads on for LINGER_MS, or until its client closes too. */
function lingeringClose(socket: Duplex): void {
  socket.end();
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once("close", () => clearTimeout(timer));
}

/** The request each connection answers last; read when an answer closes it (closeAfterAnswer). */
const answering = new WeakMap<Socket, IncomingMessage>();

/**
 * How Node closes a connection once its last answer is written (HTTP/1.0, `Connection: close`, a
 * body over the limit): at once, as `destroySoon` does, when the request arrived whole; with a
 * lingering close when its body was not read, as for an answer given before reading it (a
 * refused key, a body over the limit).
 */
function closeAfterAnswer(this: Socket): void {
  if (answering.get(this)?.complete === false) lingeringClose(this);
  else Socket.prototype.destroySoon.call(this);
}

function acceptConnection(socket: Duplex): void {
  if (socket instanceof Socket) socket.destroySoon = closeAfterAnswer;
}

function onClientError(limits: TransportLimits) {
  // Node's parser reports its error again with every later chunk: the first report is answered.
  const refused = new WeakSet<Duplex>();
  return function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
    if (refused.has(socket)) return;
    refused.add(socket);
    refuse(error, socket, limits);
  };
}

/**
 * CONNECT asks a proxy for a tunnel: this server is none. Node closes the connection without a
 * word when nobody listens for the event; here it gets a 404 in the envelope, then the close.
 */
function refuseTunnel(limits: TransportLimits) {
  return function answerConnect(req: IncomingMessage, socket: Duplex): void {
    socket.on("error", () => socket.destroy());
    const message = "No such endpoint: this server is not a proxy, and CONNECT names no API operation.";
    socket.end(rawAnswer("not_found", message, requestIdFor(req.headers["x-request-id"])));
    // A peer that never reads what is written holds the socket no longer than an idle one.
    if (socket instanceof Socket) socket.setTimeout(limits.keepAliveTimeoutMs, () => socket.destroy());
  };
}

function refuse(error: Error & { code?: string }, socket: Duplex, limits: TransportLimits): void {
  // A reset peer hears nothing.
  if (error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  // A connection already closing after its last answer (a lingering close) goes on reading and
  // dropping what follows: its timer ends it.
  if (socket.writableEnded) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // Boundary: Node keeps the response a connection is answering on the socket, untyped.
  // biome-ignore lint/nursery/noUnsafeTypeAssertion: Node's own field (see above)
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  // A request received in full before the bytes that failed (pipelining) is still being
  // answered: it was acted on, so its answer goes out first, as HTTP requires, and the
  // rejection after it (or nothing, when its client has gone meanwhile).
  if (inFlight && inFlight.req.complete) {
    inFlight.once("close", () => refuse(error, socket, limits));
    return;
  }
  // The failing request's own answer, already begun (a time-out mid-answer), cannot get a second one.
  if (inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  socket.write(rawAnswer("invalid_fields", rejection(error.code, limits)));
  lingeringClose(socket);
}

/**
 * The request-target as the app reads it, in origin-form. RFC 9112 §3.2.2 has a server accept the
 * absolute-form (`GET http://host/api/v1/ HTTP/1.1`), which names the same resource; a fragment,
 * which no form allows but Node lets through, is dropped, so `/api/v1/creators#x` is
 * `/api/v1/creators`, as it already was after a query string. `*` and an authority (CONNECT) are
 * left as they are.
 */
export function originForm(target: string): string {
  let url = target;
  if (url.charCodeAt(0) !== 0x2f) {
    const authority = /^https?:\/\/[^/?#]*/i.exec(url);
    if (!authority) return url;
    url = url.slice(authority[0].length);
    if (url.charCodeAt(0) !== 0x2f) url = `/${url}`;
  }
  const fragment = url.indexOf("#");
  return fragment === -1 ? url : url.slice(0, fragment);
}

/**
 * The API's HTTP server: Node's request, header and keep-alive time-outs set from the config (a
 * body announced and never sent is cut off after the request time-out, not Node's 300 s), parser
 * rejections answered in the API's error envelope, request-targets read in origin-form
 * (originForm), and requests in flight counted for a graceful shutdown. Node checks the time-outs every `connectionsCheckingInterval`, 30 s by default: far
 * too coarse for a 10 s header limit, hence at most a second here.
 *
 * The protocol's edges are answered here too, each in the envelope with a Request-Id: a missing,
 * repeated or malformed Host (400, see hostProblem), CONNECT (404). Repeated headers Node would
 * keep the first of (Host, Authorization, Content-Type…) are joined instead, so a repetition is
 * seen, not silently dropped. An `Expect` other than `100-continue` is ignored (RFC 9110 §10.1.1
 * allows it; Node's empty 417 is in no operation's responses): the request is answered as without it.
 */
export function createHttpServer(limits: TransportLimits): HttpServer {
  const server = createServer({
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 2))),
    requireHostHeader: false,
    joinDuplicateHeaders: true,
  });
  server.on("connection", acceptConnection);
  server.on("clientError", onClientError(limits));
  server.on("connect", refuseTunnel(limits));

  const open = new Set<ServerResponse>();
  // Responses held open by markStreaming, with how to finish each: not counted in flight.
  const streams = new Map<ServerResponse, () => void>();
  let closing = false;
  let answered = 0;
  const hooks: StreamingHooks = {
    markStreaming(res, stop) {
      if (closing) return stop();
      streams.set(res, stop);
    },
  };
  let handler: RequestListener | undefined;
  // One listener for every response (close is emitted once per response), not a closure each.
  function responseClosed(this: ServerResponse): void {
    open.delete(this);
    // Past its answer a request is no longer kept by its connection (an idle keep-alive one would
    // hold it, and its body, until the next).
    const { socket } = this.req;
    if (socket && answering.get(socket) === this.req) answering.delete(socket);
    streams.delete(this);
    if (!closing) return;
    if (this.writableFinished) answered += 1;
    setImmediate(() => server.closeIdleConnections());
  }
  // The one request listener: tracks the response, then hands the request to the app.
  function receive(req: IncomingMessage, res: ServerResponse): void {
    // Bytes after the last answer's request, parsed while the connection lingers (a body over
    // the limit, then more): no request is served on a closing connection (RFC 9112 §9.6).
    if (req.socket.writableEnded) {
      req.resume();
      return;
    }
    answering.set(req.socket, req);
    open.add(res);
    streamingHooks.set(res, hooks);
    // While closing, an answered connection is not kept alive: it would hold the close back.
    if (closing) res.shouldKeepAlive = false;
    res.on("close", responseClosed);
    const problem = hostProblem(req);
    if (problem) return answerInEnvelope(req, res, problem);
    // A body larger than any route reads is never read off after the answer (as Node would, to
    // reuse the connection): the answer closes the connection instead.
    if (Number(req.headers["content-length"]) > LARGEST_BODY_BYTES) res.shouldKeepAlive = false;
    const url = originForm(req.url ?? "/");
    if (url !== req.url) req.url = url;
    handler?.(req, res);
  }
  server.on("request", receive);
  server.on("checkExpectation", receive);

  return {
    server,
    serve(app) {
      handler = app;
    },
    inFlight: () => open.size - streams.size,
    async close(deadlineMs) {
      closing = true;
      for (const res of open) res.shouldKeepAlive = false;
      // Event streams never finish by themselves: they are ended now, and their clients resume
      // on another process or after the restart.
      for (const stop of streams.values()) stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), deadlineMs);
      });
      const outcome = await Promise.race([closed, late]);
      clearTimeout(timer);
      if (outcome !== "late") return { answered, cut: 0 };
      const cut = open.size;
      const answeredInTime = answered;
      server.closeAllConnections();
      await closed;
      return { answered: answeredInTime, cut };
    },
  };
}
