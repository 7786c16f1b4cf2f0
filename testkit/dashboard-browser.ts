// A member's browser against the dashboard's API, for tests: its cookies, CSRF token and Origin
// as the web app sends them, and members made through the operator's invitation.
import { ADMIN_TOKEN, type TestServer } from "./harness.ts";

/** The password the members made here accept their invitation with. */
export const PASSWORD = "a long and private passphrase";
export const DASHBOARD_API = "/dashboard/api/v1";
const API = DASHBOARD_API;

/** A browser of one member: its cookies, CSRF token and Origin, as the app sends them. */
export function browser(
  server: TestServer,
  { origin = server.baseUrl, headers: always = {} as Record<string, string> } = {},
) {
  const cookies = new Map<string, string>();
  let csrf = "";
  const send = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
    const headers: Record<string, string> = {
      origin,
      "x-csrf-token": csrf,
      cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; "),
      ...always,
      ...extra,
    };
    const response = await server.call(method, API + path, { body, headers });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      const [name, value] = [pair!.slice(0, at), pair!.slice(at + 1)];
      if (value === "") cookies.delete(name);
      else cookies.set(name, value);
    }
    if (typeof response.body?.csrf_token === "string") csrf = response.body.csrf_token;
    return response;
  };
  return {
    send,
    cookies,
    setCsrf: (token: string) => (csrf = token),
    session: () => cookies.get("lsh_session") ?? cookies.get("__Host-lsh_session"),
  };
}

/** The Set-Cookie line of the cookie `name`, if the answer sets it. */
export function setCookieLine(response: { headers: Headers }, name: string): string | undefined {
  return response.headers.getSetCookie().find((line) => line.startsWith(`${name}=`));
}

export async function invite(server: TestServer, brandId: string, email: string, role = "owner"): Promise<string> {
  const response = await server.call("POST", "/admin/v1/invitations", {
    key: ADMIN_TOKEN,
    body: { brand_id: brandId, email, role },
  });
  if (response.status !== 201) throw new Error(`invitation answered ${response.status}`);
  return response.body.url.split("#")[1];
}

/** A member who accepted an invitation: signed in in their own browser. */
export async function member(server: TestServer, brandId: string, email: string, role = "owner") {
  const token = await invite(server, brandId, email, role);
  const member = browser(server);
  await member.send("GET", "/session");
  const accepted = await member.send("POST", "/invitations/accept", { token, password: PASSWORD });
  if (accepted.status !== 201) throw new Error(`acceptance answered ${accepted.status}`);
  return member;
}

export type Browser = ReturnType<typeof browser>;

/** A browser with no session yet, its CSRF cookie fetched; from `address` when given (X-Forwarded-For, behind TRUST_PROXY). */
export async function signedOut(server: TestServer, address?: string): Promise<Browser> {
  const client = browser(server, address ? { headers: { "x-forwarded-for": address } } : {});
  await client.send("GET", "/session");
  return client;
}

/** The id of the brand's member with `email`, as the Members page lists it to `owner`. */
export async function memberIdOf(owner: Browser, email: string): Promise<string> {
  const listed = (await owner.send("GET", "/members")).body.members as Array<{ email: string; member_id: string }>;
  return listed.find((one) => one.email === email)!.member_id;
}
