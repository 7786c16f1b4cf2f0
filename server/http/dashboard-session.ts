import type { NextFunction, Request, RequestHandler, Response } from "express";
import { constantTimeEqual } from "../domain/keys.ts";
import type { Brand, SessionRecord } from "../domain/types.ts";
import { ApiError } from "../domain/errors.ts";
import type { DashboardLimiter } from "./dashboard-limit.ts";
import { keptUserAgent } from "../domain/user-agent.ts";
import type { Member, MembersContext, Role } from "../services/members/context.ts";
import { currentSession, type SessionClient } from "../services/members/sessions.ts";
import { findBrand } from "../store/brands.ts";
import { clientAddress, clientProtocol } from "./client-address.ts";
import { DASHBOARD_ROLES } from "../../contract/operations.ts";
import { operationOf } from "./operation-routes.ts";

export const SESSION_COOKIE = "lsh_session";
export const CSRF_COOKIE = "lsh_csrf";
/**
 * The browser's device token (HttpOnly, a year, renewed by each sign-in): a browser a member signed
 * in from is known for their email, and the sign-in throttle's account ceiling never refuses it
 * (services/members/sign-in-throttle.ts).
 */
export const DEVICE_COOKIE = "lsh_device";
export const COOKIE_PATH = "/dashboard";

/** The signed-in member of a dashboard request, set by the guard. */
export interface DashboardCaller {
  sessionId: string;
  session: SessionRecord;
  member: Member;
  brand: Brand;
}

/** A role's place in DASHBOARD_ROLES: each role may do what the ones before it may. */
const rank = (role: Role) => DASHBOARD_ROLES.indexOf(role);

export interface DashboardHttpOptions {
  publicBaseUrl: string;
}

/** Whether the client reached the server over https: PUBLIC_BASE_URL says so, or the socket or trusted proxy does. */
function servedOverHttps(req: Request, { publicBaseUrl }: DashboardHttpOptions): boolean {
  return publicBaseUrl.startsWith("https:") || clientProtocol(req) === "https";
}

/**
 * How the dashboard's cookies are named and scoped. Over https, `__Host-` cookies on `Path=/`: a
 * browser takes a `__Host-` cookie only from this very host over https, `Secure`, without a
 * `Domain`, so a sibling subdomain or a plain-http answer (a network attacker's) cannot toss one
 * in beside the real one. Over plain http (local development) no cookie can be guarded that way:
 * the plain names on `Path=/dashboard`, and the first of two same-named cookies is read, which a
 * browser sends first when its path is longer, so a tossed cookie on `Path=/` loses to the real
 * one (docs/dashboard.md).
 */
function cookieScheme(req: Request, options: DashboardHttpOptions): { prefix: string; path: string; secure: boolean } {
  return servedOverHttps(req, options)
    ? { prefix: "__Host-", path: "/", secure: true }
    : { prefix: "", path: COOKIE_PATH, secure: false };
}

/**
 * The value of the dashboard cookie `name` (SESSION_COOKIE, CSRF_COOKIE or DEVICE_COOKIE), under
 * the name the request's scheme gives it; of two with that name, the first.
 */
export function dashboardCookie(req: Request, options: DashboardHttpOptions, name: string): string | undefined {
  const wanted = cookieScheme(req, options).prefix + name;
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === wanted) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** Sets a dashboard cookie: HttpOnly for the session and the device, readable by the page for the CSRF token. */
export function setCookie(
  req: Request,
  res: Response,
  options: DashboardHttpOptions,
  name: string,
  value: string,
  { maxAgeMs, httpOnly }: { maxAgeMs?: number; httpOnly: boolean },
): void {
  const { prefix, path, secure } = cookieScheme(req, options);
  res.cookie(prefix + name, value, {
    path,
    sameSite: "lax",
    httpOnly,
    secure,
    ...(maxAgeMs === undefined ? {} : { maxAge: maxAgeMs }),
  });
}

export function clearSessionCookie(req: Request, res: Response, options: DashboardHttpOptions): void {
  setCookie(req, res, options, SESSION_COOKIE, "", { maxAgeMs: 0, httpOnly: true });
}

/** The origins a changing request may come from: the configured base URL's, and the one the request was addressed to. */
function originAllowed(req: Request, options: DashboardHttpOptions): boolean {
  const origin = req.headers.origin ?? refererOrigin(req.headers.referer);
  if (!origin || origin === "null") return false;
  const proto = servedOverHttps(req, options) ? "https" : "http";
  return origin === new URL(options.publicBaseUrl).origin || origin === `${proto}://${req.headers.host}`;
}

function refererOrigin(referer: string | undefined): string | undefined {
  try {
    return referer ? new URL(referer).origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The dashboard API's guard, before the body is read: the session cookie, the request limit (429
 * rate_limited; per session, or without a live one per client address), then 401 without a live
 * session, then the Origin and the CSRF token (403 csrf_failed), then the member's role (403
 * forbidden). Which of those an operation needs is the contract's: its `security` and
 * `x-required-role` (contract/operations.ts). An Authorization header counts for nothing here.
 */
export function dashboardGuard(
  ctx: MembersContext,
  options: DashboardHttpOptions,
  limit: DashboardLimiter,
): RequestHandler {
  return async function guardDashboard(req: Request, res: Response, next: NextFunction) {
    try {
      const operation = operationOf(res);
      if (!operation?.dashboard) return next();
      const sessionId = dashboardCookie(req, options, SESSION_COOKIE);
      const found = sessionId ? await currentSession(ctx, sessionId, clientAddress(req)) : null;
      const brand = found && (await findBrand(ctx.db, found.member.brandId));
      const caller: DashboardCaller | null =
        found && brand && sessionId ? { sessionId, session: found.session, member: found.member, brand } : null;
      if (caller) res.locals.dashboard = caller;
      // Before the 401: a script without a session is limited too, by its address.
      await limit(res, caller ? { sessionId: caller.sessionId } : { address: clientAddress(req) }, ctx.clock());
      const signedOutAllowed = !operation.sessionRequired;
      if (!caller && !signedOutAllowed)
        throw new ApiError("unauthorized", "Not signed in, or the session has ended. Sign in again.");
      if (operation.csrfRequired) {
        // Signed-out operations take the double-submitted cookie's token (or the session's, if any).
        const expected = [
          caller?.session.csrfToken,
          signedOutAllowed ? dashboardCookie(req, options, CSRF_COOKIE) : undefined,
        ].filter((token): token is string => Boolean(token));
        const sent = req.headers["x-csrf-token"];
        const tokenOk = typeof sent === "string" && expected.some((token) => constantTimeEqual(sent, token));
        if (!originAllowed(req, options) || !tokenOk) throw new ApiError("csrf_failed");
      }
      const needed = operation.role;
      if (caller && needed && rank(caller.member.role) < rank(needed)) {
        throw new ApiError(
          "forbidden",
          `Your role (${caller.member.role}) cannot do this; it needs ${needed} or above. Ask an owner.`,
        );
      }
      next();
    } catch (error) {
      next(error);
    }
  };
}

export function dashboardCallerOf(res: Response): DashboardCaller {
  const caller = res.locals.dashboard;
  if (!caller) throw new ApiError("unauthorized", "Not signed in, or the session has ended. Sign in again.");
  return caller;
}

/** Where a session is begun from: the request's client address (client-address.ts) and its browser's User-Agent. */
export function sessionClientOf(req: Request): SessionClient {
  return { address: clientAddress(req), userAgent: keptUserAgent(req.headers["user-agent"]) };
}
