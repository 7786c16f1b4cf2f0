/** Authentication, scopes, plans and the request rate (spec §5, §7, §8). */
import { check, expectEqual, expectError, expectStatus } from "../check.ts";
import type { Exchange } from "../client.ts";
import { ADDED_ENDPOINTS, SPEC_ENDPOINT_INDEX } from "../requests.ts";
import type { Scenario } from "../scenario.ts";
import { ALL_SCOPES, type Scope } from "../tenants.ts";
import { callSample, securedOperations } from "./common.ts";

function expectIdentical401s(answers: Exchange[]): void {
  for (const answer of answers) {
    expectError(answer, 401, "unauthorized");
    check(
      answer.text === answers[0]!.text,
      `401 bodies differ: ${JSON.stringify(answers[0]!.text)} vs ${JSON.stringify(answer.text)} (${answer.request.method} ${answer.request.path})`,
    );
  }
}

/** Missing, another scheme, no key, the scheme in lower case, not a key, another prefix, a key with more after it. */
const MALFORMED_AUTHORIZATIONS = (key: string): (string | undefined)[] => [
  undefined,
  "Basic Y29uZm9ybWFuY2U6eA==",
  "Bearer",
  `bearer ${key}`,
  "Bearer not-a-key",
  `Bearer svc_prod_${"a".repeat(32)}`,
  `Bearer ${key} ${key}`,
  `Bearer ${key.slice(0, -1)}`,
];

/** Syntactically a test key, but never issued. */
const UNKNOWN_KEY = `svc_test_${"Zz9".repeat(10)}Zz`;

export const authScenarios: Scenario[] = [
  {
    name: "401 bodies are byte-identical on every endpoint",
    tag: "contract",
    async run(ctx) {
      const answers: Exchange[] = [];
      for (const op of securedOperations(ctx)) {
        for (const authorization of MALFORMED_AUTHORIZATIONS(ctx.key)) {
          answers.push(await callSample(ctx, op, { key: null, ...(authorization ? { authorization } : {}) }));
        }
      }
      expectIdentical401s(answers);
      // The very bytes the contract documents, so every implementation (the mock too) sends the same.
      const documented = JSON.stringify(ctx.contract.doc.components.examples.Unauthorized.value);
      check(answers[0]!.text === documented, `the 401 body ${answers[0]!.text} is not the documented ${documented}`);
    },
  },
  {
    name: "401 is identical for missing, malformed, unknown, revoked and expired keys",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const tenant = await ctx.tenant();
      const revoked = await tenant.key();
      await tenant.revoke(revoked.keyId);
      const expired = await tenant.key({ expiresAt: new Date(Date.now() - 3_600_000).toISOString() });
      const answers: Exchange[] = [];
      for (const key of [null, "not-a-key", UNKNOWN_KEY, revoked.key, expired.key])
        answers.push(await ctx.call("GET", "/streams", { key }));
      answers.push(await ctx.call("GET", "/streams", { authorization: "Bearer " }));
      expectIdentical401s(answers);
    },
  },
  {
    name: "insufficient_scope on every endpoint, per the endpoint index",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      // The contract's x-required-scope must say what the spec's endpoint index says (and the
      // index of the operations added to it).
      const index = [...SPEC_ENDPOINT_INDEX, ...ADDED_ENDPOINTS];
      for (const entry of index) {
        const op = ctx.contract.publicOperations.find(
          (candidate) => candidate.method === entry.method && candidate.path === entry.path,
        );
        check(op, `openapi.yaml has no ${entry.method} ${entry.path} from the endpoint index`);
        expectEqual(op.scope, entry.scope, `scope of ${entry.method} ${entry.path}`);
      }
      expectEqual(ctx.contract.publicOperations.length, index.length, "number of public operations");
      const tenant = await ctx.tenant();
      for (const op of securedOperations(ctx)) {
        const scope = op.scope as Scope;
        const without = await tenant.key({ scopes: ALL_SCOPES.filter((candidate) => candidate !== scope) });
        const refused = await callSample(ctx, op, { key: without.key });
        expectError(refused, 403, "insufficient_scope");
        check(
          refused.body.error.message.includes(scope),
          `the 403 message of ${op.operationId} does not name ${scope}`,
        );
        const only = await tenant.key({ scopes: [scope] });
        const allowed = await callSample(ctx, op, { key: only.key });
        check(
          allowed.status !== 401 && allowed.status !== 403,
          `${op.operationId} refused a key with just ${scope}: ${allowed.status} ${allowed.text}`,
        );
      }
    },
  },
  {
    name: "live keys below Growth get plan_required on every endpoint; test keys are exempt",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const tenant = await ctx.tenant({ plan: "starter" });
      const live = await tenant.key({ environment: "live" });
      for (const op of securedOperations(ctx))
        expectError(await callSample(ctx, op, { key: live.key }), 402, "plan_required");
      const test = await tenant.key({ environment: "test" });
      expectStatus(await ctx.call("GET", "/streams", { key: test.key }), 200);
    },
  },
  {
    name: "request 101 in a minute is rate_limited, without Retry-After; GET /creators is never limited",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      const tenant = await ctx.tenant({ rate_limit_per_minute: 100 });
      const { key } = await tenant.key();
      for (let i = 1; i <= 100; i++) expectStatus(await ctx.call("GET", "/streams?limit=1", { key }), 200);
      const limited = await ctx.call("GET", "/streams?limit=1", { key });
      expectError(limited, 429, "rate_limited");
      check(limited.headers.get("retry-after") === null, "a 429 carries a Retry-After header");
      for (let i = 0; i < 120; i++) expectStatus(await ctx.call("GET", "/creators", { key }), 200);
    },
  },
  {
    name: "rate_limited on every endpoint that counts requests",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      // A brand allowed one request a minute: after the first, every endpoint is over the limit.
      const tenant = await ctx.tenant({ rate_limit_per_minute: 1 });
      const { key } = await tenant.key();
      expectStatus(await ctx.call("GET", "/streams", { key }), 200);
      for (const op of ctx.contract.publicOperations.filter((candidate) => candidate.operationId !== "listCreators")) {
        expectError(await callSample(ctx, op, { key }), 429, "rate_limited");
      }
    },
  },
];
