import type { NextFunction, Request, RequestHandler, Response } from "express";
import { ApiError } from "../domain/errors.ts";

/** The largest body any route reads: the API's JSON (a 50,000-character script fits many times over). */
export const LARGEST_BODY_BYTES = 1024 * 1024;

/** True when the request carries a body at all: a Content-Length (0 included) or Transfer-Encoding. */
export function announcesBody(req: Request): boolean {
  return req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined;
}

function tooLarge(res: Response, limitBytes: number): ApiError {
  // The rest of the body is not read: the connection cannot carry another request after it.
  res.set("Connection", "close");
  return new ApiError("invalid_fields", `The request body is too large: at most ${limitBytes} bytes.`);
}

/**
 * `parse` (a body-parser) with its size limit enforced at once. body-parser refuses a body over
 * its limit only after reading all of it, to keep the connection usable, so a large body held
 * the answer until it arrived in full or the request time-out cut it off. Here a body announced
 * over the limit is refused before a byte of it is read, and a chunked one as soon as the bytes
 * received pass it; the answer closes the connection. The parser keeps its own limit as well
 * (`limit`, the same number), which also bounds an inflated body.
 */
export function boundedBody(parse: RequestHandler, limitBytes: number): RequestHandler {
  return function readBoundedBody(req: Request, res: Response, next: NextFunction): void {
    if (Number(req.headers["content-length"]) > limitBytes) return next(tooLarge(res, limitBytes));
    let settled = false;
    let received = 0;
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limitBytes) settle(tooLarge(res, limitBytes));
    };
    // The parser answers once the body is read, or after reading off the rest of a refused one:
    // only the first outcome counts.
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      req.off("data", count);
      next(error);
    };
    parse(req, res, settle);
    // In the same tick as the parser's own listener, so both see every chunk.
    if (!settled && req.headers["content-length"] === undefined) req.on("data", count);
  };
}
