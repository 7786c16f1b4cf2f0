/**
 * Runs the fuzz against a server on a local port: sets up what the cases draw on (a roomy brand
 * with streams, a brand and keys for the operator operations to change, a brand's dashboard with
 * signed-in members, signed LiveKit webhooks), sends each case on a connection of its own, judges
 * the answers (judge.ts), and checks that the server still serves and, for a server process, that
 * it has not exited.
 */
import fc from "fast-check";
import { integerSetting } from "../../server/config.ts";
import { signBody } from "../../testkit/livekit-stand-in.ts";
import { SchemaArbitraries } from "../arbitraries.ts";
import { type Bases, createSender, REQUEST_TIMEOUT_MS } from "../client.ts";
import type { Contract } from "../contract.ts";
import { prepareWorld } from "../properties.ts";
import { inviteMember } from "../../server/cli/admin-client.ts";
import { createTenant, operatorClient } from "../tenants.ts";
import { type FuzzWorld, liveKitEvents } from "./cases.ts";
import { prepareDashboardWorld } from "./dashboard.ts";
import type { FuzzCase } from "./drafts.ts";
import { createJudge } from "./judge.ts";
import { describeRaw, type RawExchange, sendRaw } from "./raw-http.ts";

export interface FuzzTarget {
  name: string;
  port: number;
  adminToken: string;
  metricsToken: string;
  /** The key pair the server verifies LiveKit's webhooks with. */
  livekit: { apiKey: string; apiSecret: string };
  /** The lifecycle sweeper and delivery worker run (see JudgeOptions). */
  backgroundJobs: boolean;
  /** Null while the server runs; otherwise how it ended. */
  exited(): string | null;
  /** The end of what the server printed, for a failure report; empty in-process. */
  output(): string;
}

export interface FuzzOptions {
  /** Cases per property. */
  runs: number;
  seed: number;
  /** An answer later than this is a hang. */
  deadlineMs: number;
}

/** A fixed seed, so that CI runs the same cases every time; FUZZ_SEED to run others, FUZZ_RUNS for more. */
export const DEFAULT_FUZZ_SEED = 230_523;

/** `runs` cases per property unless FUZZ_RUNS says otherwise; an answer later than the suite's REQUEST_TIMEOUT_MS is a hang. */
export function fuzzOptionsFromEnv(runs: number, env: NodeJS.ProcessEnv = process.env): FuzzOptions {
  return {
    runs: integerSetting(env, "FUZZ_RUNS", runs, { min: 1 }),
    seed: integerSetting(env, "FUZZ_SEED", DEFAULT_FUZZ_SEED),
    deadlineMs: REQUEST_TIMEOUT_MS,
  };
}

/** `seed` mixed with `name` (FNV-1a), a 31-bit seed for fast-check. */
function propertySeed(seed: number, name: string): number {
  let hash = 0x811c9dc5 ^ seed;
  for (const char of name) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
  return hash >>> 1;
}

export interface FuzzSession {
  world: FuzzWorld;
  /**
   * Runs the property "every answer passes the judge" over `runs` cases of the property `name`
   * (its seed is the run's seed mixed with the name, so properties draw different cases); null,
   * or a report of the first failure.
   */
  check(name: string, cases: fc.Arbitrary<FuzzCase>, options: FuzzOptions): Promise<string | null>;
  /** What is wrong with the answer to one case (empty: nothing). */
  send(fuzzCase: FuzzCase, options: Pick<FuzzOptions, "deadlineMs">): Promise<string[]>;
  /** Whether the server still runs and answers a probe and an API request as usual (empty: it does). */
  alive(): Promise<string[]>;
}

/** A case and its answers, as a failure report shows them. */
function describeExchange(fuzzCase: FuzzCase, exchange: RawExchange, problems: readonly string[]): string {
  const answers = exchange.responses.map(
    (response) =>
      `${response.status} ${response.header("content-type") ?? "(no type)"} Request-Id: ${response.header("request-id") ?? "(none)"} ${JSON.stringify(response.text.slice(0, 200))}`,
  );
  return [
    `${fuzzCase.label}`,
    `  request:\n    ${describeRaw(fuzzCase.request)}`,
    `  answer${answers.length === 1 ? "" : "s"} (${Math.round(exchange.ms)} ms): ${answers.length ? answers.join("\n    ") : exchange.timedOut ? "none in time" : exchange.closed ? "none, connection closed" : "none"}`,
    ...problems.map((problem) => `  ✗ ${problem}`),
  ].join("\n");
}

async function prepareFuzzWorld(target: FuzzTarget, contract: Contract, seed: number): Promise<FuzzWorld> {
  const origin = `http://127.0.0.1:${target.port}`;
  const bases: Bases = { api: `${origin}/api/v1`, admin: `${origin}/admin/v1`, adminToken: target.adminToken };
  const send = createSender(contract, bases);
  const operator = operatorClient(send, bases);
  const property = await prepareWorld(contract, send, (await (await createTenant(operator)).key()).key);
  const spare = await createTenant(operator);
  const keyIds = [(await spare.key()).keyId, (await spare.key()).keyId];
  const dashboardBrand = await createTenant(operator);
  const dashboard = await prepareDashboardWorld(origin, {
    invite: async (email, role) =>
      (await inviteMember(operator, { brand_id: dashboardBrand.brandId, email, role })).url,
    creatorId: property.creatorIds[0]!,
    tag: String(target.port),
  });
  const rooms = await Promise.all(
    property.streamIds.map(
      async (id) => (await send({ method: "GET", path: `/streams/${id}`, key: property.key })).body.room_name as string,
    ),
  );
  const world: FuzzWorld = {
    contract,
    arbitraries: new SchemaArbitraries(contract),
    property,
    host: `127.0.0.1:${target.port}`,
    adminToken: target.adminToken,
    metricsToken: target.metricsToken,
    brandIds: [spare.brandId],
    keyIds,
    roomNames: rooms,
    signedWebhooks: [],
    dashboard,
  };
  const events = fc.sample(liveKitEvents(world), { seed, numRuns: 24 }).map((event) => JSON.stringify(event));
  const signedWebhooks = await Promise.all(
    events.map(async (body) => ({
      body,
      authorization: await signBody(body, target.livekit.apiKey, target.livekit.apiSecret),
    })),
  );
  return { ...world, signedWebhooks };
}

export async function fuzzSession(
  target: FuzzTarget,
  contract: Contract,
  { seed }: Pick<FuzzOptions, "seed">,
): Promise<FuzzSession> {
  const world = await prepareFuzzWorld(target, contract, seed);
  const judge = createJudge(contract, { backgroundJobs: target.backgroundJobs });

  async function exchange(
    fuzzCase: FuzzCase,
    deadlineMs: number,
  ): Promise<{ exchange: RawExchange; problems: string[] }> {
    const answered = await sendRaw(target.port, fuzzCase.request, { deadlineMs, untilClose: fuzzCase.untilClose });
    const problems = judge(fuzzCase, answered);
    const exited = target.exited();
    if (exited) problems.push(`the server process exited: ${exited}\n${target.output()}`);
    return { exchange: answered, problems };
  }

  return {
    world,
    async check(name, cases, { runs, seed: runSeed, deadlineMs }) {
      const property = fc.asyncProperty(cases, async (fuzzCase) => {
        const { exchange: answered, problems } = await exchange(fuzzCase, deadlineMs);
        if (problems.length) throw new Error(describeExchange(fuzzCase, answered, problems));
      });
      // No shrinking: a case is a list of named changes already, and shrinking a hang costs a deadline per step.
      const details = await fc.check(property, {
        numRuns: runs,
        seed: propertySeed(runSeed, name),
        endOnFailure: true,
      });
      if (!details.failed) return null;
      const reason =
        details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      return `case ${details.numRuns} of ${runs} (replay: FUZZ_SEED=${runSeed} FUZZ_RUNS=${runs}):\n${reason}`;
    },
    async send(fuzzCase, { deadlineMs }) {
      const { exchange: answered, problems } = await exchange(fuzzCase, deadlineMs);
      return problems.length ? [describeExchange(fuzzCase, answered, problems)] : [];
    },
    async alive() {
      const exited = target.exited();
      if (exited) return [`the server process exited: ${exited}\n${target.output()}`];
      const origin = `http://127.0.0.1:${target.port}`;
      const problems: string[] = [];
      const health = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).catch(
        (error: Error) => error,
      );
      if (health instanceof Error || health.status !== 200)
        problems.push(`GET /healthz: ${health instanceof Error ? health.message : health.status}`);
      const list = await fetch(`${origin}/api/v1/streams`, {
        headers: { authorization: `Bearer ${world.property.key}` },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      }).catch((error: Error) => error);
      if (list instanceof Error || list.status !== 200)
        problems.push(`GET /api/v1/streams: ${list instanceof Error ? list.message : list.status}`);
      return problems;
    },
  };
}
