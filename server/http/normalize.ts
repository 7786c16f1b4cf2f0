import type { NextFunction, Request, Response } from "express";
import { ApiError } from "../domain/errors.ts";
import { ADMIN_BASE, API_BASE, DASHBOARD_API_BASE } from "../../contract/operations.ts";

/**
 * What every request goes through first, on the server and on the mock alike (one middleware, not
 * several: every layer costs each request a little, see docs/performance.md).
 * - HEAD is answered as GET without a body (Node drops it: the response was created for a HEAD),
 *   so it goes through the same guard, validation and headers (Cache-Control on /creators).
 * - `/api/v1` and `/api/v1/` are the same discovery document (the operation index matches both).
 * - Any other path of the public, operator or dashboard API ending in a slash names nothing:
 *   `GET /api/v1/streams/` is 404, never the list. Generated clients and the mock read it as
 *   `/streams/{id}` with an empty id, so answering the list would make the server and every other
 *   reading of the contract disagree.
 */
export function normalizeRequest(req: Request, res: Response, next: NextFunction): void {
  if (req.method === "HEAD") {
    req.method = "GET";
    // What an answer held open (an event stream) needs to know: a HEAD ends at its headers.
    res.locals.head = true;
  }
  const url = req.url;
  const base = [API_BASE, ADMIN_BASE, DASHBOARD_API_BASE].find((prefix) => url.startsWith(`${prefix}/`));
  if (base && req.path.length > base.length + 1 && req.path.endsWith("/")) {
    return next(
      new ApiError(
        "not_found",
        `No such endpoint: ${req.path}. Paths take no trailing slash: ${req.path.replace(/\/+$/, "")}.`,
      ),
    );
  }
  next();
}
