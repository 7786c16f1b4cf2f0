import { existsSync } from "node:fs";
import { join } from "node:path";
import express, { type Request, type RequestHandler } from "express";
import { ApiError } from "../domain/errors.ts";
import { DASHBOARD_CSP, setPageSecurityHeaders } from "./page-security.ts";

export const DASHBOARD_BASE = "/dashboard";

/** Paths under /dashboard that belong to its API, not the app (checked on the path below the mount). */
export function isDashboardApi(req: Request): boolean {
  return req.path === "/api" || req.path.startsWith("/api/");
}

/**
 * The built single-page app (build/dashboard/, made by npm run build): its files, and index.html
 * for every other path (the app's own routes, /dashboard/keys and the like). Every answer carries
 * the CSP; index.html is never cached, so a new build is picked up at once.
 */
export function dashboardApp(dir: string): RequestHandler {
  const files = express.static(dir, { index: false, fallthrough: true, redirect: false });
  const index = join(dir, "index.html");
  return function serveDashboard(req, res, next) {
    setPageSecurityHeaders(res, DASHBOARD_CSP);
    files(req, res, () => {
      if (!existsSync(index)) return next(new ApiError("not_found", "The dashboard is not built: run npm run build."));
      res.setHeader("Cache-Control", "no-store");
      res.sendFile(index);
    });
  };
}
