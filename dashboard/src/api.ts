import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "../../generated/api.ts";

export type Schemas = components["schemas"];
export type Mode = Schemas["DashboardModeValue"];
export type Session = Schemas["DashboardSession"];

/** The dashboard API's error body, whichever operation answered. */
export interface ApiErrorBody {
  error: { code: string; message: string };
}

let csrfToken = "";

/** Keeps the token the server handed out last (GET /session, sign-in, password change). */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

let onSignedOut: () => void = () => undefined;

/** What to do when the server says the session is gone (expired, revoked elsewhere). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== "GET" && request.method !== "HEAD") request.headers.set("X-CSRF-Token", csrfToken);
    return request;
  },
  onResponse({ request, response }) {
    const signingIn = new URL(request.url).pathname.endsWith("/session");
    if (response.status === 401 && !signingIn) onSignedOut();
    return response;
  },
};

/** The only way the app talks to the server: typed by the contract (generated/api.ts). */
export const api = createClient<paths>({ baseUrl: "/dashboard/api/v1" });
api.use(csrf);

/**
 * The public API (/api/v1) of the same server, for what it offers without a key: the creators.
 * No cookie or CSRF token goes with it (the session cookie's path is /dashboard).
 */
export const publicApi = createClient<paths>({ baseUrl: "/api/v1" });

/** A message for people from an error body, or from a failure to reach the server. */
export function messageOf(error: unknown): string {
  const body = error as Partial<ApiErrorBody> | undefined;
  if (body?.error?.message) return body.error.message;
  if (error instanceof Error) return `The server could not be reached (${error.message}).`;
  return "Something went wrong; try again.";
}

export function codeOf(error: unknown): string | undefined {
  return (error as Partial<ApiErrorBody> | undefined)?.error?.code;
}
