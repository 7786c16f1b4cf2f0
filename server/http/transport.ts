import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { ERRORS } from "../errors.ts";
import { newRequestId } from "./request-id.ts";

export interface TransportLimits {
  /** Time to receive a whole request, body included. */
  requestTimeoutMs: number;
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
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

/** A minimal HTTP/1.1 answer written on the socket itself: Express never saw the request. */
function rejectionResponse(message: string): string {
  const body = JSON.stringify({ error: { code: "invalid_fields", message } });
  return [
    `HTTP/1.1 ${ERRORS.invalid_fields.status} Bad Request`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `Request-Id: ${newRequestId()}`,
    "Connection: close",
    "",
    body,
  ].join("\r\n");
}

/**
 * How long a refused connection still reads (and drops) what its client sends after the 400: a
 * connection closed with bytes unread is reset by the kernel, and a reset can cut short an answer
 * still on its way (the 400, or an earlier request's). Apache calls this a lingering close.
 */
const LINGER_MS = 2_000;

function onClientError(limits: TransportLimits) {
  // Node's parser reports its error again with every later chunk: the first report is answered.
  const refused = new WeakSet<Duplex>();
  return function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
    if (refused.has(socket)) return;
    refused.add(socket);
    refuse(error, socket, limits);
  };
}

function refuse(error: Error & { code?: string }, socket: Duplex, limits: TransportLimits): void {
  // A reset peer hears nothing.
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
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
  socket.end(rejectionResponse(rejection(error.code, limits)));
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
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
 */
export function createHttpServer(limits: TransportLimits): HttpServer {
  const server = createServer({
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 2))),
  });
  server.on("clientError", onClientError(limits));

  const open = new Set<ServerResponse>();
  let closing = false;
  let answered = 0;
  let handler: RequestListener | undefined;
  // One listener for every response (close is emitted once per response), not a closure each.
  function responseClosed(this: ServerResponse): void {
    open.delete(this);
    if (!closing) return;
    if (this.writableFinished) answered += 1;
    setImmediate(() => server.closeIdleConnections());
  }
  // The one request listener: tracks the response, then hands the request to the app.
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    open.add(res);
    // While closing, an answered connection is not kept alive: it would hold the close back.
    if (closing) res.shouldKeepAlive = false;
    res.on("close", responseClosed);
    const url = originForm(req.url ?? "/");
    if (url !== req.url) req.url = url;
    handler?.(req, res);
  });

  return {
    server,
    serve(app) {
      handler = app;
    },
    inFlight: () => open.size,
    async close(deadlineMs) {
      closing = true;
      for (const res of open) res.shouldKeepAlive = false;
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
