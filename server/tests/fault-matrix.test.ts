// The fault matrix: every write of the public, dashboard and operator APIs, on two server processes
// (server/main.ts, as `npm start` runs it) sharing a PostgreSQL cluster of the test's own, while
// every backend is terminated again and again, and while the tables are locked for 20 s. Each
// answer is judged against the database afterwards, read straight from it: 2xx means the write was
// done; 404 is never right, since every target existed (and every stream was live) when it was
// asked for; 5xx means either, and then a retry converges. No answer takes longer than one
// statement time-out plus the documented grace, and /readyz says 503 while a lock fails every
// authenticated request.
import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, postgresSkipReason, streamBody } from "../../testkit/harness.ts";
import { type Answer, probeReadiness, send } from "../../testkit/mixed-load.ts";
import { clusterSkipReason, createCluster, type PgCluster } from "../../testkit/pg-cluster.ts";
import { type RunningProcess, runServer, serverOrigin, stop } from "../../testkit/server-process.ts";

const clusterReason = clusterSkipReason();
const skipped = postgresSkipReason() ?? (clusterReason ? `Fault matrix skipped: ${clusterReason}.` : null);
if (skipped) console.log(skipped);

// DATABASE_STATEMENT_TIMEOUT_MS is 10 s by default; 8 s here keeps a 20 s lock to two or three
// attempts per operation while leaving two time-outs in a row (16 s) past the bound below.
const STATEMENT_TIMEOUT_MS = 8_000;
/** docs/operators.md: past the statement time-out, a database that does not answer is given up this much later. */
const ANSWER_GRACE_MS = 1_000;
/** What a loaded 2-core machine adds to an answer (seen: up to 4 s with a load average of 25). */
const SLACK_MS = 4_000;
const ANSWER_BOUND_MS = STATEMENT_TIMEOUT_MS + ANSWER_GRACE_MS + SLACK_MS;
const LOCK_MS = 20_000;
/**
 * How long a retry after a 5xx may take to converge once the fault is over: an Idempotency-Key
 * whose request failed while its release was locked out too stays in use for 60 s (409).
 */
const CONVERGE_MS = 75_000;
const PASSWORD = "a long and private passphrase";
const DATABASE = "lsh_fault_matrix";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Tables the writes change, locked together (EXCLUSIVE: reads go on, every write waits). */
const WRITE_TABLES = [
  "brands",
  "api_keys",
  "streams",
  "stream_counts",
  "webhooks",
  "webhook_events",
  "webhook_deliveries",
  "idempotency_keys",
  "members",
  "invitations",
  "audit_log",
];
/** Tables every authenticated request reads (ACCESS EXCLUSIVE: reads wait too). */
const AUTH_TABLES = ["api_keys", "dashboard_sessions"];

interface Judged extends Answer {
  /** Ids the check reads, fixed when the target was made. */
  target: Target;
}
type Target = Record<string, string>;

/**
 * One write operation: `prepare` makes a fresh target while nothing fails (a live stream to end,
 * a key to revoke), `act` sends the write to one process, `done` reads from the database whether
 * the write took effect (for a create, the one the answer names).
 */
interface WriteCase {
  operation: string;
  success: number;
  /** Hashes a password (argon2): seconds of CPU on a loaded machine, which is not a wait on the database. */
  hashesPassword?: true;
  prepare(): Promise<Target>;
  act(target: Target, base: string): Promise<Answer>;
  done(target: Target, answer: Answer): Promise<boolean>;
}

describe.skipIf(skipped !== null)("the fault matrix: every write, two processes, one PostgreSQL", () => {
  let cluster: PgCluster;
  let servers: RunningProcess[] = [];
  let bases: string[] = [];
  let sql: pg.Pool;
  let brandId: string;
  let key: string;
  let cases: WriteCase[] = [];

  const row = async (text: string, params: unknown[]) => (await sql.query(text, params)).rows[0];
  const exists = async (table: string, id: string | undefined, where = "true") =>
    id !== undefined && (await row(`SELECT 1 FROM ${table} WHERE id = $1 AND ${where}`, [id])) !== undefined;

  /** Sends until answered with `success` (setting up, while nothing fails). */
  async function surely(attempt: () => Promise<Answer>, success: number, what: string): Promise<Answer> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answer = await attempt();
      if (answer.status === success) return answer;
      if (Date.now() > deadline) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
      await sleep(200);
    }
  }

  const api = (
    base: string,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
    asKey = key,
  ) =>
    send(base, method, `/api/v1${path}`, { key: asKey, body, headers, timeoutMs: 60_000 }).then((a) => ({
      ...a,
      process: bases.indexOf(base),
      operation: "",
    }));
  const admin = (base: string, method: string, path: string, body?: unknown) =>
    send(base, method, `/admin/v1${path}`, { key: ADMIN_TOKEN, body, timeoutMs: 60_000 }).then((a) => ({
      ...a,
      process: bases.indexOf(base),
      operation: "",
    }));

  /** A member's browser: the session cookie and CSRF token, valid on either process (both read the database). */
  function browser() {
    const cookies = new Map<string, string>();
    let csrf = "";
    const request = async (base: string, method: string, path: string, body?: unknown): Promise<Answer> => {
      const answer = await send(base, method, `/dashboard/api/v1${path}`, {
        body,
        timeoutMs: 60_000,
        headers: {
          origin: base,
          "x-csrf-token": csrf,
          cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; "),
        },
      });
      for (const line of answer.setCookies ?? []) {
        const pair = line.split(";")[0]!;
        const at = pair.indexOf("=");
        if (at + 1 === pair.length) cookies.delete(pair.slice(0, at));
        else cookies.set(pair.slice(0, at), pair.slice(at + 1));
      }
      if (typeof answer.body?.csrf_token === "string") csrf = answer.body.csrf_token;
      return { ...answer, process: bases.indexOf(base), operation: "" };
    };
    return {
      request,
      /** SHA-256 of the session cookie's value, as dashboard_sessions keeps it. */
      sessionHash: () => sha256(cookies.get("lsh_session") ?? ""),
      async signIn(email: string, password = PASSWORD) {
        await request(bases[0]!, "GET", "/session");
        await surely(() => request(bases[0]!, "POST", "/session", { email, password }), 200, `sign in ${email}`);
      },
    };
  }

  /** An invitation made by the operator: its id and the link's token. */
  async function invitation(role = "developer"): Promise<{ id: string; token: string; email: string }> {
    const email = `${randomUUID()}@example.com`;
    const made = await surely(
      () => admin(bases[0]!, "POST", "/invitations", { brand_id: brandId, email, role }),
      201,
      "invite",
    );
    return { id: made.body.invitation_id, token: made.body.url.split("#")[1], email };
  }

  /** A member of the brand, signed in in a browser of its own. */
  async function newMember(role = "developer") {
    const invited = await invitation(role);
    const member = browser();
    await member.request(bases[0]!, "GET", "/session");
    const accept = () =>
      member.request(bases[0]!, "POST", "/invitations/accept", { token: invited.token, password: PASSWORD });
    for (let tries = 0; tries < 3; tries++) {
      const accepted = await accept();
      if (accepted.status === 201)
        return { member, id: accepted.body.member.member_id as string, email: invited.email };
    }
    // Accepted after all by a try answered 500: the member signs in.
    await member.signIn(invited.email);
    const { id } = await row("SELECT id FROM members WHERE email = $1", [invited.email]);
    return { member, id: id as string, email: invited.email };
  }

  async function liveStream(): Promise<string> {
    return (await surely(() => api(bases[0]!, "POST", "/streams", streamBody()), 201, "start")).body.stream_id;
  }

  /**
   * A webhook of the brand, written straight into the database as POST /webhooks leaves one:
   * registration stops at 16 per brand and mode, and the matrix needs more targets than that.
   */
  async function webhook(): Promise<string> {
    const id = randomUUID();
    await sql.query(
      `INSERT INTO webhooks (id, brand_id, mode, url, events, secret, created_at)
       VALUES ($1, $2, 'test', 'https://hooks.example.com/matrix', ARRAY['stream.error'], $3, now())`,
      [id, brandId, `whsec_${randomUUID().replaceAll("-", "")}`],
    );
    return id;
  }

  /**
   * Whether the brand has an active key of that name. Key creation takes no Idempotency-Key: the
   * retry of one a fault answered with 5xx but did make is told 409 key_name_taken, naming it.
   */
  const activeKeyNamed = async (name: string) =>
    (await row("SELECT 1 FROM api_keys WHERE brand_id = $1 AND name = $2 AND revoked_at IS NULL", [brandId, name])) !==
    undefined;

  /** A brand of its own with a key that may register webhooks: each has room for 16. */
  async function brandWithKey(): Promise<string> {
    const body = { name: "Matrix webhooks", vertical: "igaming", plan: "starter", rate_limit_per_minute: 1_000_000 };
    const brand = (await surely(() => admin(bases[0]!, "POST", "/brands", body), 201, "brand")).body.brand_id;
    const keyBody = () => ({
      brand_id: brand,
      name: `hooks ${randomUUID()}`,
      environment: "test",
      scopes: ["webhooks:write"],
    });
    return (await surely(() => admin(bases[0]!, "POST", "/keys", keyBody()), 201, "key")).body.key;
  }

  async function apiKey(): Promise<{ id: string; key: string }> {
    // A name of its own per attempt: names are unique among a brand's active keys, and an
    // attempt whose answer a fault lost may have made its key.
    const body = () => ({
      brand_id: brandId,
      name: `matrix ${randomUUID()}`,
      environment: "test",
      scopes: ["streams:read"],
    });
    const made = await surely(() => admin(bases[0]!, "POST", "/keys", body()), 201, "key");
    return { id: made.body.key_id, key: made.body.key };
  }

  /** A failed delivery of a webhook that still exists, written as the delivery worker leaves one. */
  async function failedDelivery(): Promise<{ id: string; attempt: string }> {
    const hook = await webhook();
    const event = `evt_${randomUUID().replaceAll("-", "")}`;
    const id = randomUUID();
    await sql.query(
      `INSERT INTO webhook_events (id, brand_id, mode, type, stream_id, payload, created_at)
       VALUES ($1, $2, 'test', 'stream.error', $3, '{}', now())`,
      [event, brandId, randomUUID()],
    );
    await sql.query(
      `INSERT INTO webhook_deliveries (id, event_id, webhook_id, brand_id, status, attempt, created_at, last_attempt_at, response_status)
       VALUES ($1, $2, $3, $4, 'failed', 6, now(), now(), 500)`,
      [id, event, hook, brandId],
    );
    return { id, attempt: "6" };
  }

  function writeCases(owner: ReturnType<typeof browser>): WriteCase[] {
    const createdId = (field: string) => (answer: Answer) => answer.body?.[field] as string | undefined;
    const dash = (member: ReturnType<typeof browser>, method: string, path: string, body?: unknown) => (base: string) =>
      member.request(base, method, path, body);
    return [
      // The public API.
      {
        operation: "createStream",
        success: 201,
        prepare: async () => ({ idempotencyKey: randomUUID() }),
        act: (t, base) => api(base, "POST", "/streams", streamBody(), { "idempotency-key": t.idempotencyKey! }),
        done: (_t, a) => exists("streams", createdId("stream_id")(a), "status = 'live'"),
      },
      {
        operation: "endStream",
        success: 200,
        prepare: async () => ({ id: await liveStream() }),
        act: (t, base) => api(base, "DELETE", `/streams/${t.id}`),
        done: (t) => exists("streams", t.id, "status = 'ended'"),
      },
      {
        operation: "createWebhook",
        success: 201,
        prepare: async () => ({ idempotencyKey: randomUUID(), key: await brandWithKey() }),
        act: (t, base) =>
          api(
            base,
            "POST",
            "/webhooks",
            { url: "https://hooks.example.com/made", events: ["stream.error"] },
            { "idempotency-key": t.idempotencyKey! },
            t.key,
          ),
        done: (_t, a) => exists("webhooks", createdId("webhook_id")(a), "deleted_at IS NULL"),
      },
      {
        operation: "deleteWebhook",
        success: 200,
        prepare: async () => ({ id: await webhook() }),
        act: (t, base) => api(base, "DELETE", `/webhooks?id=${t.id}`),
        done: (t) => exists("webhooks", t.id, "deleted_at IS NOT NULL"),
      },
      // The operator API.
      {
        operation: "adminCreateBrand",
        success: 201,
        prepare: async () => ({}),
        act: (_t, base) => admin(base, "POST", "/brands", { name: "Matrix", vertical: "igaming", plan: "starter" }),
        done: (_t, a) => exists("brands", createdId("brand_id")(a)),
      },
      {
        operation: "adminUpdateBrand",
        success: 200,
        // A brand of its own per target, so no later write overwrites what this one did.
        prepare: async () => {
          const body = { name: "Updated", vertical: "igaming", plan: "starter" };
          const made = await surely(() => admin(bases[0]!, "POST", "/brands", body), 201, "brand");
          return { brand: made.body.brand_id, credits: String(1 + Math.floor(Math.random() * 1e9)) };
        },
        act: (t, base) => admin(base, "PATCH", `/brands/${t.brand}`, { credits_cents: Number(t.credits) }),
        done: async (t) =>
          (await row("SELECT credits_cents FROM brands WHERE id = $1", [t.brand])).credits_cents === t.credits,
      },
      {
        operation: "adminCreateKey",
        success: 201,
        prepare: async () => ({ name: `made ${randomUUID()}` }),
        act: (t, base) =>
          admin(base, "POST", "/keys", {
            brand_id: brandId,
            name: t.name,
            environment: "test",
            scopes: ["streams:read"],
          }),
        done: (t) => activeKeyNamed(t.name!),
      },
      {
        operation: "adminRevokeKey",
        success: 200,
        prepare: async () => ({ id: (await apiKey()).id }),
        act: (t, base) => admin(base, "DELETE", `/keys/${t.id}`),
        done: (t) => exists("api_keys", t.id, "revoked_at IS NOT NULL"),
      },
      {
        operation: "adminRevokeKeyBySecret",
        success: 200,
        prepare: async () => apiKey(),
        act: (t, base) => admin(base, "POST", "/keys/revoke", { key: t.key }),
        done: (t) => exists("api_keys", t.id, "revoked_at IS NOT NULL"),
      },
      {
        operation: "adminRetryWebhookDelivery",
        success: 200,
        prepare: failedDelivery,
        act: (t, base) => admin(base, "POST", `/webhook-deliveries/${t.id}/retry`),
        // Pending again, or already attempted once more by a delivery worker.
        done: (t) => exists("webhook_deliveries", t.id, `(status = 'pending' OR attempt > ${Number(t.attempt)})`),
      },
      {
        operation: "adminInviteMember",
        success: 201,
        prepare: async () => ({ email: `${randomUUID()}@example.com` }),
        act: (t, base) => admin(base, "POST", "/invitations", { brand_id: brandId, email: t.email, role: "viewer" }),
        done: (_t, a) => exists("invitations", createdId("invitation_id")(a)),
      },
      // The dashboard's API.
      {
        operation: "dashboardSignIn",
        success: 200,
        prepare: async () => ({}),
        hashesPassword: true,
        act: async (_t, base) => {
          const fresh = browser();
          await fresh.request(base, "GET", "/session");
          return fresh.request(base, "POST", "/session", { email: "owner@example.com", password: PASSWORD });
        },
        done: async (_t, a) => {
          const cookie = a.setCookies?.find((line) => line.startsWith("lsh_session="))?.split(";")[0];
          if (!cookie) return false;
          const hash = sha256(cookie.slice("lsh_session=".length));
          return (await row("SELECT 1 FROM dashboard_sessions WHERE id_hash = $1", [hash])) !== undefined;
        },
      },
      {
        operation: "dashboardSignOut",
        success: 200,
        prepare: async () => {
          const session = browser();
          await session.signIn("owner@example.com");
          targets.set(session.sessionHash(), session);
          return { session: session.sessionHash() };
        },
        act: (t, base) => targets.get(t.session!)!.request(base, "DELETE", "/session"),
        done: async (t) =>
          (await row("SELECT 1 FROM dashboard_sessions WHERE id_hash = $1 AND revoked_at IS NOT NULL", [t.session])) !==
          undefined,
      },
      {
        operation: "dashboardSignOutEverywhere",
        success: 200,
        prepare: async () => {
          const { member, id } = await newMember("viewer");
          targets.set(id, member);
          return { member: id };
        },
        act: (t, base) => targets.get(t.member!)!.request(base, "POST", "/sessions/revoke-all"),
        done: async (t) =>
          (await row("SELECT 1 FROM dashboard_sessions WHERE member_id = $1 AND revoked_at IS NULL", [t.member])) ===
          undefined,
      },
      {
        operation: "dashboardRevokeSession",
        success: 200,
        prepare: async () => {
          // A member signed in twice: the first browser revokes the second's session.
          const { member, id, email } = await newMember("viewer");
          const other = browser();
          await other.signIn(email);
          const { public_id } = await row("SELECT public_id FROM dashboard_sessions WHERE id_hash = $1", [
            other.sessionHash(),
          ]);
          targets.set(id, member);
          return { member: id, session: public_id as string };
        },
        act: (t, base) => targets.get(t.member!)!.request(base, "DELETE", `/account/sessions/${t.session}`),
        done: async (t) =>
          (await row("SELECT 1 FROM dashboard_sessions WHERE public_id = $1 AND revoked_at IS NOT NULL", [
            t.session,
          ])) !== undefined,
      },
      {
        operation: "dashboardAcceptInvitation",
        success: 201,
        prepare: async () => {
          const { token, email } = await invitation("viewer");
          return { token, email };
        },
        hashesPassword: true,
        act: async (t, base) => {
          const fresh = browser();
          await fresh.request(base, "GET", "/session");
          return fresh.request(base, "POST", "/invitations/accept", { token: t.token, password: PASSWORD });
        },
        done: async (t) =>
          (await row("SELECT 1 FROM members WHERE email = $1 AND removed_at IS NULL", [t.email])) !== undefined,
      },
      {
        operation: "dashboardChangePassword",
        success: 200,
        hashesPassword: true,
        prepare: async () => {
          const { member, id } = await newMember("viewer");
          targets.set(id, member);
          return { member: id };
        },
        act: (t, base) =>
          targets
            .get(t.member!)!
            .request(base, "PUT", "/account/password", { current_password: PASSWORD, new_password: `${PASSWORD}!` }),
        // Still the old password exactly when the hash is the one set at acceptance.
        done: async (t) => {
          const { password_hash: hash } = await row("SELECT password_hash FROM members WHERE id = $1", [t.member]);
          return hash !== passwordHashes.get(t.member!);
        },
      },
      {
        operation: "dashboardStartTotp",
        success: 200,
        prepare: async () => {
          const { member, id } = await newMember("viewer");
          targets.set(id, member);
          return { member: id };
        },
        act: (t, base) => targets.get(t.member!)!.request(base, "POST", "/account/totp", { password: PASSWORD }),
        done: async (t) => exists("members", t.member, "totp_pending IS NOT NULL"),
      },
      {
        operation: "dashboardInviteMember",
        success: 201,
        prepare: async () => ({ email: `${randomUUID()}@example.com` }),
        act: (t, base) => dash(owner, "POST", "/members/invitations", { email: t.email, role: "viewer" })(base),
        done: (_t, a) => exists("invitations", createdId("invitation_id")(a)),
      },
      {
        operation: "dashboardRevokeInvitation",
        success: 200,
        prepare: async () => ({ id: (await invitation()).id }),
        act: (t, base) => dash(owner, "DELETE", `/members/invitations/${t.id}`)(base),
        done: (t) => exists("invitations", t.id, "revoked_at IS NOT NULL"),
      },
      {
        operation: "dashboardChangeRole",
        success: 200,
        prepare: async () => ({ id: (await newMember("developer")).id }),
        act: (t, base) => dash(owner, "PATCH", `/members/${t.id}`, { role: "viewer" })(base),
        done: (t) => exists("members", t.id, "role = 'viewer'"),
      },
      {
        operation: "dashboardRemoveMember",
        success: 200,
        prepare: async () => ({ id: (await newMember("viewer")).id }),
        act: (t, base) => dash(owner, "DELETE", `/members/${t.id}`)(base),
        done: (t) => exists("members", t.id, "removed_at IS NOT NULL"),
      },
      {
        operation: "dashboardCreateKey",
        success: 201,
        prepare: async () => ({ name: `made ${randomUUID()}` }),
        act: (t, base) => dash(owner, "POST", "/modes/test/keys", { name: t.name, scopes: ["streams:read"] })(base),
        done: (t) => activeKeyNamed(t.name!),
      },
      {
        operation: "dashboardRevokeKey",
        success: 200,
        prepare: async () => ({ id: (await apiKey()).id }),
        act: (t, base) => dash(owner, "DELETE", `/modes/test/keys/${t.id}`)(base),
        done: (t) => exists("api_keys", t.id, "revoked_at IS NOT NULL"),
      },
      {
        operation: "dashboardCreateStream",
        success: 201,
        prepare: async () => ({}),
        act: (_t, base) => dash(owner, "POST", "/modes/test/streams", streamBody())(base),
        done: (_t, a) => exists("streams", createdId("stream_id")(a), "status = 'live'"),
      },
      {
        operation: "dashboardEndStream",
        success: 200,
        prepare: async () => ({ id: await liveStream() }),
        act: (t, base) => dash(owner, "DELETE", `/modes/test/streams/${t.id}`)(base),
        done: (t) => exists("streams", t.id, "status = 'ended'"),
      },
    ];
  }

  /** Browsers of the targets that are sessions or members, by session hash or member id. */
  const targets = new Map<string, ReturnType<typeof browser>>();
  /** The password hash each member had when made, to tell a changed password. */
  const passwordHashes = new Map<string, string>();

  beforeAll(async () => {
    cluster = await createCluster();
    await cluster.createDatabase(DATABASE);
    sql = new pg.Pool({ connectionString: cluster.url(DATABASE), max: 4 });
    sql.on("error", () => undefined);
    const env = {
      DATABASE_URL: cluster.url(DATABASE),
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      ADMIN_TOKEN,
      DASHBOARD_RATE_LIMIT_PER_MINUTE: "1000000",
      DASHBOARD_SIGNED_OUT_RATE_LIMIT_PER_MINUTE: "1000000",
      LOG_LEVEL: "fatal",
    };
    servers = [runServer(env), runServer(env)];
    bases = await Promise.all(servers.map((server) => serverOrigin(server)));

    const brand = await admin(bases[0]!, "POST", "/brands", {
      name: "Fault matrix",
      vertical: "live-commerce",
      plan: "growth",
      rate_limit_per_minute: 1_000_000,
      max_active_streams: 1_000_000,
    });
    expect(brand.status).toBe(201);
    brandId = brand.body.brand_id;
    const scopes = ["streams:read", "streams:write", "analytics:read", "webhooks:write"];
    const made = await admin(bases[0]!, "POST", "/keys", { brand_id: brandId, name: "m", environment: "test", scopes });
    key = made.body.key;
    const invited = await admin(bases[0]!, "POST", "/invitations", {
      brand_id: brandId,
      email: "owner@example.com",
      role: "owner",
    });
    const owner = browser();
    await owner.request(bases[0]!, "GET", "/session");
    const accepted = await owner.request(bases[0]!, "POST", "/invitations/accept", {
      token: invited.body.url.split("#")[1],
      password: PASSWORD,
    });
    expect(accepted.status).toBe(201);
    cases = writeCases(owner);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(
      servers.map(async (server) => {
        const killer = setTimeout(() => server.child.kill("SIGKILL"), 20_000);
        await stop(server);
        clearTimeout(killer);
      }),
    );
    await sql?.end();
    await cluster?.cleanup();
  }, 60_000);

  /** `count` fresh targets for every case, made while nothing fails. */
  async function prepareAll(count: number): Promise<Map<WriteCase, Target[]>> {
    const prepared = new Map<WriteCase, Target[]>();
    await Promise.all(
      cases.map(async (write) => {
        const made: Target[] = [];
        for (let i = 0; i < count; i++) made.push(await write.prepare());
        for (const target of made.filter((t) => t.member)) {
          const { password_hash } = await row("SELECT password_hash FROM members WHERE id = $1", [target.member]);
          passwordHashes.set(target.member!, password_hash);
        }
        prepared.set(write, made);
      }),
    );
    return prepared;
  }

  /** Every case works through its targets, one write at a time, alternating processes, while `during` runs. */
  async function actDuring(
    prepared: Map<WriteCase, Target[]>,
    during: () => Promise<void>,
  ): Promise<Map<WriteCase, Judged[]>> {
    const answers = new Map<WriteCase, Judged[]>();
    let faulting = true;
    const fault = during().finally(() => (faulting = false));
    await Promise.all(
      [...prepared].map(async ([write, targets], n) => {
        const mine: Judged[] = [];
        answers.set(write, mine);
        for (const [i, target] of targets.entries()) {
          if (!faulting) break;
          const answer = await write.act(target, bases[(n + i) % bases.length]!);
          mine.push({ ...answer, operation: write.operation, target });
        }
      }),
    );
    await fault;
    return answers;
  }

  /**
   * Each answer against the database once the fault is over: 2xx is done, 5xx is db_error and a
   * retry (same target, same Idempotency-Key) converges to done; anything else, or an answer
   * slower than the bound, is a violation.
   */
  async function judge(
    answers: Map<WriteCase, Judged[]>,
    { timed = true } = {},
  ): Promise<{ violations: string[]; summary: string }> {
    const violations: string[] = [];
    const tally = new Map<string, number>();
    await Promise.all(
      [...answers].map(async ([write, judged]) => {
        for (const answer of judged) {
          const ms = answer.endedAt - answer.startedAt;
          const what = `process ${answer.process} ${write.operation} → ${answer.status || answer.failure} ${answer.code ?? ""} after ${ms} ms`;
          tally.set(`${answer.status}`, (tally.get(`${answer.status}`) ?? 0) + 1);
          if (timed && ms > ANSWER_BOUND_MS && !write.hashesPassword)
            violations.push(`${what}: slower than ${ANSWER_BOUND_MS} ms`);
          if (answer.status === write.success) {
            if (!(await write.done(answer.target, answer))) violations.push(`${what}: answered done, not done`);
            continue;
          }
          if (answer.status !== 500 || answer.code !== "db_error") {
            violations.push(`${what}: ${answer.message ?? ""} (the target existed and the write was possible)`);
            continue;
          }
          // A 5xx: either outcome; a retry must converge to done.
          const deadline = Date.now() + CONVERGE_MS;
          let retry = await write.act(answer.target, bases[(answer.process + 1) % bases.length]!);
          const settling = (status: number, code?: string) => status >= 500 || code === "idempotency_key_in_use";
          while (settling(retry.status, retry.code) && Date.now() < deadline) {
            await sleep(250);
            retry = await write.act(answer.target, bases[(answer.process + 1) % bases.length]!);
          }
          // The retry of a write the 5xx'd attempt did may find it done (404 for an ended stream):
          // only the state decides.
          if (settling(retry.status, retry.code) || !(await write.done(answer.target, retry)))
            violations.push(`${what}: a retry did not converge (${retry.status} ${retry.code ?? ""})`);
        }
      }),
    );
    const summary = [...tally].map(([status, count]) => `${count} × ${status}`).join(", ");
    return { violations, summary };
  }

  function expectAlive(): void {
    const exited = servers
      .map((server, i) => ({ server, i }))
      .filter(({ server }) => server.child.exitCode !== null || server.child.signalCode !== null)
      .map(
        ({ server, i }) =>
          `process ${i} exited ${server.child.exitCode ?? server.child.signalCode}: ${server.stderr().slice(-2_000)}`,
      );
    expect(exited).toEqual([]);
  }

  it("every backend terminated every 150 ms", async () => {
    const prepared = await prepareAll(6);
    let rounds = 0;
    const answers = await actDuring(prepared, async () => {
      const until = Date.now() + 8_000;
      while (Date.now() < until) {
        await cluster.terminateAll(DATABASE);
        rounds++;
        await sleep(150);
      }
    });
    expectAlive();
    // Outcomes only: reconnecting after each termination costs a backend's start and the client's
    // CPU, which a loaded machine stretches past any bound; the bound on waits is held under the locks.
    const { violations, summary } = await judge(answers, { timed: false });
    console.log(`terminations (${rounds} rounds): ${summary}`);
    expect(violations).toEqual([]);
    expect([...answers.values()].every((judged) => judged.length > 0)).toBe(true);
  }, 400_000);

  /**
   * Holds `mode` locks on `tables` for LOCK_MS, from a connection of the test's own. The tables are
   * locked one after another, so a server transaction that holds a later one and waits for an
   * earlier one (an insert's foreign-key check of `brands`, say) deadlocks with the LOCK itself:
   * PostgreSQL then cancels one of the two. When it cancels the LOCK, the fault is taken again
   * once that transaction is through; when it cancels the server's, that answer is judged.
   */
  async function lockFor(tables: string[], mode: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const client = await sql.connect();
      try {
        await client.query("BEGIN");
        await client.query(`LOCK TABLE ${tables.join(", ")} IN ${mode} MODE`);
        await sleep(LOCK_MS);
        await client.query("COMMIT");
        return;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        const deadlock = (error as { code?: string }).code === "40P01";
        if (!deadlock || attempt >= 5) throw error;
      } finally {
        client.release();
      }
    }
  }

  it(`the written tables locked for ${LOCK_MS / 1000} s (reads go on)`, async () => {
    const prepared = await prepareAll(6);
    const answers = await actDuring(prepared, () => lockFor(WRITE_TABLES, "EXCLUSIVE"));
    expectAlive();
    const { violations, summary } = await judge(answers);
    console.log(`write lock: ${summary}`);
    expect(violations).toEqual([]);
  }, 400_000);

  it(`the keys and sessions locked for ${LOCK_MS / 1000} s: /readyz 503, every answer in time`, async () => {
    const prepared = await prepareAll(6);
    const readiness = probeReadiness({ bases, everyMs: 500, timeoutMs: 30_000 });
    let lockedAt = 0;
    let freedAt = 0;
    const answers = await actDuring(prepared, async () => {
      lockedAt = Date.now();
      await lockFor(AUTH_TABLES, "ACCESS EXCLUSIVE");
      freedAt = Date.now();
    });
    await readiness.stop();
    expectAlive();
    const { violations, summary } = await judge(answers);
    console.log(`auth lock: ${summary}`);
    expect(violations).toEqual([]);
    // Probes sent once the probe's own time-out has passed under the lock, answered before it ends.
    for (const process of bases.keys()) {
      const during = readiness.probes.filter(
        (probe) => probe.process === process && probe.startedAt >= lockedAt + 3_000 && probe.endedAt <= freedAt,
      );
      expect(during.length, `process ${process}: no /readyz during the lock`).toBeGreaterThan(0);
      expect(during.map((probe) => probe.status)).toEqual(during.map(() => 503));
    }
  }, 400_000);
});
