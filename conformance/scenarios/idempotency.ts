/**
 * Idempotency-Key on POST /streams and POST /webhooks (contract: "Retries and idempotency"):
 * replay, reuse with another body, and a key still in use. A black-box suite cannot hold a request
 * in flight, so the in-use case sends the same request several times at once, and tries again
 * with a new key until one of them met the first still running.
 */
import { randomUUID } from "node:crypto";
import { check, expectEqual, expectError, expectStatus } from "../check.ts";
import type { Exchange } from "../client.ts";
import type { Scenario, ScenarioContext } from "../scenario.ts";
import { streamBody } from "./common.ts";

const HOOK = { url: "https://hooks.example.com/conformance", events: ["stream.started"] };
const PARALLEL = 8;
const ROUNDS = 10;

const keyed = (idempotencyKey: string) => ({ "idempotency-key": idempotencyKey });

/** Cleans up what a POST created, so the scenario leaves no active stream or webhook behind. */
async function undo(ctx: ScenarioContext, path: string, answer: Exchange): Promise<void> {
  if (answer.status !== 201) return;
  if (path === "/streams") expectStatus(await ctx.call("DELETE", `/streams/${answer.body.stream_id}`), 200);
  else expectStatus(await ctx.call("DELETE", `/webhooks?id=${answer.body.webhook_id}`), 200);
}

async function bodyFor(ctx: ScenarioContext, path: string, variant = ""): Promise<Record<string, unknown>> {
  return path === "/streams" ? streamBody(ctx, { product_name: `Conformance idempotency${variant}` }) : { ...HOOK, url: `${HOOK.url}${variant}` };
}

export const idempotencyScenarios: Scenario[] = ["/streams", "/webhooks"].flatMap((path): Scenario[] => [
  {
    name: `POST ${path} with an Idempotency-Key: the same body replays the first 201 (Idempotent-Replayed: true); another body is 422 idempotency_key_reused`,
    tag: "behaviour",
    async run(ctx) {
      const idempotencyKey = randomUUID();
      const body = await bodyFor(ctx, path);
      const first = await ctx.call("POST", path, { body, headers: keyed(idempotencyKey) });
      expectStatus(first, 201);
      check(first.headers.get("idempotent-replayed") === null, "the first answer says Idempotent-Replayed");
      const again = await ctx.call("POST", path, { body, headers: keyed(idempotencyKey) });
      expectStatus(again, 201);
      expectEqual(again.headers.get("idempotent-replayed"), "true", "Idempotent-Replayed of the replay");
      expectEqual(again.body, first.body, "the replayed body");
      expectError(await ctx.call("POST", path, { body: await bodyFor(ctx, path, "-other"), headers: keyed(idempotencyKey) }), 422, "idempotency_key_reused");
      await undo(ctx, path, first);
    },
  },
  {
    name: `POST ${path}: the same Idempotency-Key sent ${PARALLEL} times at once acts once; the others replay it or are 409 idempotency_key_in_use`,
    tag: "behaviour",
    async run(ctx) {
      let busy = 0;
      for (let round = 0; round < ROUNDS && busy === 0; round++) {
        const idempotencyKey = randomUUID();
        const body = await bodyFor(ctx, path, `-${round}`);
        const answers = await Promise.all(Array.from({ length: PARALLEL }, () => ctx.call("POST", path, { body, headers: keyed(idempotencyKey) })));
        const created = answers.filter((answer) => answer.status === 201);
        for (const answer of answers.filter((candidate) => candidate.status !== 201)) expectError(answer, 409, "idempotency_key_in_use");
        check(created.length > 0, "no request of the round was answered 201");
        const id = (answer: Exchange) => answer.body.stream_id ?? answer.body.webhook_id;
        check(new Set(created.map(id)).size === 1, `one key created several resources: ${created.map(id).join(", ")}`);
        expectEqual(created.filter((answer) => answer.headers.get("idempotent-replayed") === null).length, 1, "answers not marked as replays");
        busy = answers.length - created.length;
        await undo(ctx, path, created[0]!);
      }
      check(busy > 0, `no request met another with its key still running in ${ROUNDS} rounds of ${PARALLEL}`);
    },
  },
]);
