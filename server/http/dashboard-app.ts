import { existsSync } from "node:fs";
import { join } from "node:path";
import express, { type Request, type RequestHandler } from "express";
import { ApiError } from "../errors.ts";

export const DASHBOARD_BASE = "/dashboard";

/**
 * Only the app's own files: no inline script or style, nothing from another host, never framed.
 * `data:` images for a QR code drawn by the page.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

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
    res.setHeader("Content-Security-Policy", DASHBOARD_CSP);
    res.setHeader("X-Frame-Options", "DENY");
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Referrer-Policy", "same-origin");
    files(req, res, () => {
      if (!existsSync(index)) return next(new ApiError("not_found", "The dashboard is not built: run npm run build."));
      res.setHeader("Cache-Control", "no-store");
      res.sendFile(index);
    });
  };
}
