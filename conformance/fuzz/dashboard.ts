/**
 * What the fuzz needs for the dashboard's API (/dashboard/api/v1): signed-in members of a brand
 * of its own, made as a browser makes them (an operator's invitation, accepted with a password),
 * the ids the brand's pages name, and the credentials a browser sends (the session cookie, the
 * CSRF token, the Origin) from right to very wrong.
 */
import fc from "fast-check";
import { DASHBOARD_API_BASE } from "../../contract/operations.ts";
import { REQUEST_TIMEOUT_MS } from "../client.ts";
import { type Draft, headersWith, type Mutation, mutate } from "./drafts.ts";

/** A member's signed-in browser: the `lsh_session` cookie's value and the session's CSRF token. */
export interface DashboardSession {
  session: string;
  csrf: string;
}

export interface DashboardFuzzWorld {
  /** The server's own origin, which the CSRF check accepts. */
  origin: string;
  /** The brand's only owner: every operation is open to it. */
  owner: DashboardSession;
  /**
   * A member of its own for each operation that ends the session it is sent with (sign out, and
   * everywhere; a password change): its cases end only that one.
   */
  ending: Readonly<Record<string, DashboardSession>>;
  /** Path parameter → ids of the brand's things (members: not the owner's, so it stays owner). */
  ids: Readonly<Record<string, readonly string[]>>;
}

/** The operations that end the session they are sent with, when they succeed. */
const SESSION_ENDING = ["dashboardSignOut", "dashboardSignOutEverywhere", "dashboardChangePassword"] as const;

export function sessionFor(world: DashboardFuzzWorld, operationId: string): DashboardSession {
  return world.ending[operationId] ?? world.owner;
}

const PASSWORD = "fuzzing the dashboard with a long passphrase";

type Json = Record<string, any>;

/** A browser's request to the dashboard API: JSON, with the session's cookie and CSRF token. */
async function call(
  origin: string,
  method: string,
  path: string,
  { body, session, cookie, csrf }: { body?: unknown; session?: DashboardSession; cookie?: string; csrf?: string } = {},
): Promise<{ status: number; body: Json; cookies: string[] }> {
  const response = await fetch(`${origin}${DASHBOARD_API_BASE}${path}`, {
    method,
    headers: {
      origin,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(session ? { cookie: `lsh_session=${session.session}`, "x-csrf-token": session.csrf } : {}),
      ...(cookie ? { cookie } : {}),
      ...(csrf ? { "x-csrf-token": csrf } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  const parsed = text ? (JSON.parse(text) as Json) : {};
  if (response.status >= 300)
    throw new Error(
      `fuzz set-up: ${method} ${DASHBOARD_API_BASE}${path} answered ${response.status} ${text.slice(0, 200)}`,
    );
  return { status: response.status, body: parsed, cookies: response.headers.getSetCookie() };
}

/** Accepts an invitation in a fresh browser, as the invitation page does: the new member's session. */
async function accept(origin: string, url: string): Promise<DashboardSession> {
  const token = url.split("#")[1]!;
  const signedOut = await call(origin, "GET", "/session");
  const csrf = signedOut.body.csrf_token as string;
  const accepted = await fetch(`${origin}${DASHBOARD_API_BASE}/invitations/accept`, {
    method: "POST",
    headers: { origin, "content-type": "application/json", cookie: `lsh_csrf=${csrf}`, "x-csrf-token": csrf },
    body: JSON.stringify({ token, password: PASSWORD }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const body = (await accepted.json()) as Json;
  const session = accepted.headers
    .getSetCookie()
    .map((line) => /^lsh_session=([^;]+)/.exec(line)?.[1])
    .find(Boolean);
  if (accepted.status !== 201 || !session)
    throw new Error(
      `fuzz set-up: accepting an invitation answered ${accepted.status} ${JSON.stringify(body).slice(0, 200)}`,
    );
  return { session, csrf: body.csrf_token as string };
}

/** Signs a member in again in a fresh browser, as the sign-in page does: another session of theirs. */
async function signInAgain(origin: string, email: string): Promise<void> {
  const signedOut = await call(origin, "GET", "/session");
  const csrf = signedOut.body.csrf_token as string;
  await call(origin, "POST", "/session", {
    body: { email, password: PASSWORD },
    cookie: `lsh_csrf=${csrf}`,
    csrf,
  });
}

/**
 * A brand's dashboard with an owner, a member for each session-ending operation, two more members for the member operations, and a key, a webhook (on a host that never
 * resolves), a stream, an open invitation and another session of the owner for the path ids.
 */
export async function prepareDashboardWorld(
  origin: string,
  {
    invite,
    creatorId,
    tag,
  }: { invite(email: string, role: "owner" | "developer" | "viewer"): Promise<string>; creatorId: string; tag: string },
): Promise<DashboardFuzzWorld> {
  const member = (name: string, role: "owner" | "developer" | "viewer") =>
    invite(`${name}-${tag}@fuzz.example`, role).then((url) => accept(origin, url));
  const owner = await member("owner", "owner");
  // The owner signed in elsewhere too: a session of theirs other than the fuzz's own, to revoke.
  await signInAgain(origin, `owner-${tag}@fuzz.example`);
  const ending: Record<string, DashboardSession> = {};
  for (const operationId of SESSION_ENDING) ending[operationId] = await member(`ending-${operationId}`, "developer");
  await member("viewer", "viewer");
  await member("developer", "developer");
  const send = (method: string, path: string, body?: unknown) =>
    call(origin, method, path, { session: owner, body }).then((answer) => answer.body);
  const members = ((await send("GET", "/members")).members as Json[])
    .filter((one) => /^(viewer|developer)-/.test(one.email))
    .map((one) => one.member_id as string);
  const key = await send("POST", "/modes/test/keys", { name: "fuzz", scopes: ["streams:read", "webhooks:write"] });
  // Webhooks are registered only through the public API (spec §6): with the key just made.
  const registered = await fetch(`${origin}/api/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
    body: JSON.stringify({ url: "https://hooks.receiver.invalid/fuzz", events: ["stream.started", "stream.ended"] }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (registered.status !== 201)
    throw new Error(`fuzz set-up: POST /api/v1/webhooks answered ${registered.status} ${await registered.text()}`);
  const webhook = (await registered.json()) as Json;
  const stream = await send("POST", "/modes/test/streams", {
    creator_id: creatorId,
    product_name: "Fuzzed kettle",
    platform: "youtube",
  });
  const deliveries = (
    (await send("GET", `/modes/test/webhooks/${webhook.webhook_id}/deliveries`)).deliveries as Json[]
  ).map((one) => one.delivery_id as string);
  const otherSessions = ((await send("GET", "/account/sessions")).sessions as Json[])
    .filter((one) => !one.current)
    .map((one) => one.session_id as string);
  const invitation = await send("POST", "/members/invitations", {
    email: `invited-${tag}@fuzz.example`,
    role: "viewer",
  });
  return {
    origin,
    owner,
    ending,
    ids: {
      mode: ["test", "live"],
      id: [stream.stream_id],
      key_id: [key.key_id],
      webhook_id: [webhook.webhook_id],
      delivery_id: deliveries,
      member_id: members,
      invitation_id: [invitation.invitation_id],
      session_id: otherSessions,
    },
  };
}

/**
 * A browser's credentials, from right to very wrong: the session cookie with its CSRF token and
 * the server's Origin; none; each part missing or wrong; a signed-out browser's double-submitted
 * token; an API key, which the dashboard never takes.
 */
export function dashboardCredentials(
  world: DashboardFuzzWorld,
  session: DashboardSession,
  apiKey: string,
): fc.Arbitrary<Mutation> {
  const set = (label: string, values: { cookie?: string; csrf?: string; origin?: string; authorization?: string }) =>
    mutate(label, (draft: Draft) => {
      let headers = draft.headers;
      for (const [name, value] of [
        ["Cookie", values.cookie],
        ["X-CSRF-Token", values.csrf],
        ["Origin", values.origin],
        ["Authorization", values.authorization],
      ] as const) {
        headers = headersWith({ ...draft, headers }, name, value ?? null);
      }
      return { headers };
    });
  const right = { cookie: `lsh_session=${session.session}`, csrf: session.csrf, origin: world.origin };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips what a header cannot carry
  const garbage = fc.string({ maxLength: 40 }).map((value) => value.replace(/[\x00-\x1f\x7f;,]/g, ""));
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(set("the member's session", right)) },
    fc.constant(set("no credentials", {})),
    fc.constant(set("the session, no CSRF token", { ...right, csrf: undefined })),
    garbage.map((csrf) => set(`the session, X-CSRF-Token: ${csrf}`, { ...right, csrf })),
    fc
      .constantFrom(
        "https://evil.example",
        "null",
        "",
        `${world.origin}.evil.example`,
        world.origin.replace("http:", "https:"),
      )
      .map((origin) => set(`the session, Origin: ${origin}`, { ...right, origin })),
    fc.constant(set("the session, no Origin", { ...right, origin: undefined })),
    garbage.map((value) => set(`Cookie: lsh_session=${value}`, { ...right, cookie: `lsh_session=${value}` })),
    fc
      .constantFrom(
        `lsh_session=${session.session}; lsh_session=x`,
        `lsh_session=x; lsh_session=${session.session}`,
        `lsh_session="${session.session}"`,
        `LSH_SESSION=${session.session}`,
      )
      .map((cookie) => set(`Cookie: ${cookie.slice(0, 40)}`, { ...right, cookie })),
    garbage.map((token) =>
      set("signed out, the double-submitted token", { cookie: `lsh_csrf=${token}`, csrf: token, origin: world.origin }),
    ),
    fc.constant(set("an API key instead", { authorization: `Bearer ${apiKey}`, origin: world.origin })),
    fc.constant(set("the session and an API key", { ...right, authorization: `Bearer ${apiKey}` })),
  );
}
