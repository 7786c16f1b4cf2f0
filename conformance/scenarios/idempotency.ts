/**
 * Idempotency-Key on POST /streams, POST /webhooks and DELETE /streams/{id} (contract: "Retries
 * and idempotency"): replay, reuse with another body (or stream), and a key still in use. A black-box suite cannot hold a request
 * in flight, so the in-use case sends the same request several times at once, and tries again
 * with a new key until one of them met the first still running.
 */
import { randomUUID } from "node:crypto";
import { check, expectEqual, expectError, expectStatus } from "../check.ts";
import type { Exchange } from "../client.ts";
import type { Scenario, ScenarioContext } from "../scenario.ts";
import { startStream, streamBody } from "./common.ts";

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
  return path === "/streams"
    ? streamBody(ctx, { product_name: `Conformance idempotency${variant}` })
    : { ...HOOK, url: `${HOOK.url}${variant}` };
}

const postScenarios: Scenario[] = ["/streams", "/webhooks"].flatMap((path): Scenario[] => [
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
      expectError(
        await ctx.call("POST", path, { body: await bodyFor(ctx, path, "-other"), headers: keyed(idempotencyKey) }),
        422,
        "idempotency_key_reused",
      );
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
        const answers = await Promise.all(
          Array.from({ length: PARALLEL }, () => ctx.call("POST", path, { body, headers: keyed(idempotencyKey) })),
        );
        const created = answers.filter((answer) => answer.status === 201);
        for (const answer of answers.filter((candidate) => candidate.status !== 201))
          expectError(answer, 409, "idempotency_key_in_use");
        check(created.length > 0, "no request of the round was answered 201");
        const id = (answer: Exchange) => answer.body.stream_id ?? answer.body.webhook_id;
        check(new Set(created.map(id)).size === 1, `one key created several resources: ${created.map(id).join(", ")}`);
        expectEqual(
          created.filter((answer) => answer.headers.get("idempotent-replayed") === null).length,
          1,
          "answers not marked as replays",
        );
        busy = answers.length - created.length;
        await undo(ctx, path, created[0]!);
      }
      check(busy > 0, `no request met another with its key still running in ${ROUNDS} rounds of ${PARALLEL}`);
    },
  },
]);

const endScenarios: Scenario[] = [
  {
    name: "DELETE /streams/{id} with an Idempotency-Key: the same key replays the first 200 (Idempotent-Replayed: true) where a keyless retry is 404; the key for another stream is 422 idempotency_key_reused",
    tag: "behaviour",
    async run(ctx) {
      const [streamId, otherId] = [await startStream(ctx), await startStream(ctx)];
      const idempotencyKey = randomUUID();
      const first = await ctx.call("DELETE", `/streams/${streamId}`, { headers: keyed(idempotencyKey) });
      expectStatus(first, 200);
      check(first.headers.get("idempotent-replayed") === null, "the first answer says Idempotent-Replayed");
      const again = await ctx.call("DELETE", `/streams/${streamId}`, { headers: keyed(idempotencyKey) });
      expectStatus(again, 200);
      expectEqual(again.headers.get("idempotent-replayed"), "true", "Idempotent-Replayed of the replay");
      expectEqual(again.body, first.body, "the replayed body");
      expectError(await ctx.call("DELETE", `/streams/${streamId}`), 404, "not_found");
      expectError(
        await ctx.call("DELETE", `/streams/${otherId}`, { headers: keyed(idempotencyKey) }),
        422,
        "idempotency_key_reused",
      );
      expectStatus(await ctx.call("DELETE", `/streams/${otherId}`), 200);
    },
  },
  {
    name: `DELETE /streams/{id}: the same Idempotency-Key sent ${PARALLEL} times at once ends the stream once; the others replay it or are 409 idempotency_key_in_use`,
    tag: "behaviour",
    async run(ctx) {
      let busy = 0;
      for (let round = 0; round < ROUNDS && busy === 0; round++) {
        const streamId = await startStream(ctx);
        const idempotencyKey = randomUUID();
        const answers = await Promise.all(
          Array.from({ length: PARALLEL }, () =>
            ctx.call("DELETE", `/streams/${streamId}`, { headers: keyed(idempotencyKey) }),
          ),
        );
        const ended = answers.filter((answer) => answer.status === 200);
        for (const answer of answers.filter((candidate) => candidate.status !== 200))
          expectError(answer, 409, "idempotency_key_in_use");
        check(ended.length > 0, "no request of the round was answered 200");
        expectEqual(
          ended.filter((answer) => answer.headers.get("idempotent-replayed") === null).length,
          1,
          "answers not marked as replays",
        );
        busy = answers.length - ended.length;
      }
      check(busy > 0, `no request met another with its key still running in ${ROUNDS} rounds of ${PARALLEL}`);
    },
  },
];

export const idempotencyScenarios: Scenario[] = [...postScenarios, ...endScenarios];
