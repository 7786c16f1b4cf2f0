import { ADMIN_TOKEN, type TestServer } from "./harness.ts";

export const MEMBER_PASSWORD = "a long and private passphrase";

/** A member's signed-in browser on the dashboard API: its session cookie's value and CSRF token. */
export interface SignedInMember {
  session: string;
  csrf: string;
  /** The headers a browser sends with a changing request: the cookie, the token, `origin`. */
  headers(origin: string): Record<string, string>;
}

/**
 * Invites `email` to the brand through the operator API and accepts the invitation as the
 * invitation page does (a CSRF token from GET /session first): the member, signed in.
 */
export async function signedInMember(server: TestServer, brandId: string, email: string, role: "owner" | "developer" | "viewer" = "owner"): Promise<SignedInMember> {
  const invited = await server.call("POST", "/admin/v1/invitations", { key: ADMIN_TOKEN, body: { brand_id: brandId, email, role } });
  if (invited.status !== 201) throw new Error(`inviting ${email} answered ${invited.status}: ${invited.text}`);
  const token = (invited.body.url as string).split("#")[1];
  const signedOut = await server.call("GET", "/dashboard/api/v1/session");
  const csrf = signedOut.body.csrf_token as string;
  const headers = { origin: server.baseUrl, cookie: `lsh_csrf=${csrf}`, "x-csrf-token": csrf };
  const accepted = await server.call("POST", "/dashboard/api/v1/invitations/accept", { headers, body: { token, password: MEMBER_PASSWORD } });
  const session = accepted.headers
    .getSetCookie()
    .map((line) => /^lsh_session=([^;]+)/.exec(line)?.[1])
    .find(Boolean);
  if (accepted.status !== 201 || !session) throw new Error(`accepting the invitation of ${email} answered ${accepted.status}: ${accepted.text}`);
  const member = { session, csrf: accepted.body.csrf_token as string };
  return { ...member, headers: (origin) => ({ cookie: `lsh_session=${member.session}`, "x-csrf-token": member.csrf, origin }) };
}
