import { createHash } from "node:crypto";
import type { Response } from "express";

/**
 * The dashboard's policy: only the app's own files, no inline script or style, nothing from
 * another host, never framed. `data:` images for a QR code drawn by the page.
 */
const DASHBOARD_DIRECTIVES: Readonly<Record<string, string>> = {
  "default-src": "'self'",
  "script-src": "'self'",
  "style-src": "'self'",
  "img-src": "'self' data:",
  "font-src": "'self'",
  "connect-src": "'self'",
  "object-src": "'none'",
  "base-uri": "'none'",
  "form-action": "'self'",
  "frame-ancestors": "'none'",
};

const policy = (directives: Readonly<Record<string, string>>) =>
  Object.entries(directives)
    .map(([name, value]) => `${name} ${value}`)
    .join("; ");

export const DASHBOARD_CSP = policy(DASHBOARD_DIRECTIVES);

const INLINE_SCRIPT = /<script(?:\s[^>]*)?>([\s\S]*?)<\/script>/g;

/**
 * The docs page's policy: the dashboard's, but for what a one-file page rendered by Redoc needs.
 * Its own inline scripts (the renderer and the contract it shows), each allowed by its SHA-256
 * and no other; inline styles, which the renderer writes as it draws (styles cannot run code);
 * and its icon font, inlined as `data:`. Same framing rule: never framed.
 */
export function docsCsp(html: string): string {
  const hashes = [...html.matchAll(INLINE_SCRIPT)].map(
    ([, body]) =>
      `'sha256-${createHash("sha256")
        .update(body ?? "")
        .digest("base64")}'`,
  );
  return policy({
    ...DASHBOARD_DIRECTIVES,
    "script-src": ["'self'", ...hashes].join(" "),
    "style-src": "'self' 'unsafe-inline'",
    "font-src": "'self' data:",
  });
}

/** The headers every page the server serves carries (the dashboard's app, the docs): its CSP, no framing, no sniffing. */
export function setPageSecurityHeaders(res: Response, csp: string): void {
  res.setHeader("Content-Security-Policy", csp);
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "same-origin");
}
