/**
 * The partner's recovery of deliveries (DESIGN.md §6, "Deliveries, partner side"): one delivery
 * with its attempts, a retry and a recover, each with an Idempotency-Key (replay, reuse, in use)
 * and their 400s. A delivery comes from a webhook registered for `stream.started` and a stream
 * started: it is listed (written, or still to come) as soon as the start is answered.
 */
import { randomUUID } from "node:crypto";
import { check, expectEqual, expectError, expectStatus } from "../check.ts";
import type { Exchange } from "../client.ts";
import type { Scenario, ScenarioContext } from "../scenario.ts";
import { startStream } from "./common.ts";

const PARALLEL = 8;
const ROUNDS = 10;
const keyed = (idempotencyKey: string) => ({ "idempotency-key": idempotencyKey });

/** A webhook, a started stream's delivery to it, and how to undo both. */
async function withDelivery(
  ctx: ScenarioContext,
  run: (ids: { webhookId: string; deliveryId: string; streamId: string }) => Promise<void>,
): Promise<void> {
  const hook = await ctx.call("POST", "/webhooks", {
    body: { url: `https://hooks.example.com/conformance-${randomUUID()}`, events: ["stream.started"] },
  });
  expectStatus(hook, 201);
  const webhookId = hook.body.webhook_id as string;
  const streamId = await startStream(ctx);
  try {
    const listed = await ctx.call("GET", `/webhooks/deliveries?stream_id=${streamId}&webhook_id=${webhookId}`);
    expectStatus(listed, 200);
    const deliveryId = listed.body.deliveries[0]?.delivery_id as string | undefined;
    check(deliveryId !== undefined, "the started stream's delivery is not listed");
    await run({ webhookId, deliveryId: deliveryId!, streamId });
  } finally {
    await ctx.call("DELETE", `/streams/${streamId}`);
    await ctx.call("DELETE", `/webhooks?id=${webhookId}`);
  }
}

/** Sends `send` with one key PARALLEL times at once until some met the first still running; every other answer is `status` or 409. */
async function inUse(ctx: ScenarioContext, status: number, send: (key: string) => Promise<Exchange>): Promise<void> {
  let busy = 0;
  for (let round = 0; round < ROUNDS && busy === 0; round++) {
    const idempotencyKey = randomUUID();
    const answers = await Promise.all(Array.from({ length: PARALLEL }, () => send(idempotencyKey)));
    const done = answers.filter((answer) => answer.status === status);
    for (const answer of answers.filter((candidate) => candidate.status !== status))
      expectError(answer, 409, "idempotency_key_in_use");
    expectEqual(
      done.filter((answer) => answer.headers.get("idempotent-replayed") === null).length,
      1,
      "answers not marked as replays",
    );
    busy = answers.length - done.length;
  }
  check(busy > 0, `no request met another with its key still running in ${ROUNDS} rounds of ${PARALLEL}`);
}

export const deliveryScenarios: Scenario[] = [
  {
    name: "GET /webhooks/deliveries/{delivery_id} shows the delivery, its attempts and its payload; another id is 404",
    tag: "behaviour",
    async run(ctx) {
      await withDelivery(ctx, async ({ deliveryId, streamId }) => {
        const detail = await ctx.call("GET", `/webhooks/deliveries/${deliveryId}`);
        expectStatus(detail, 200);
        expectEqual(detail.body.delivery.delivery_id, deliveryId, "delivery_id");
        expectEqual(JSON.parse(detail.body.payload).data.stream_id, streamId, "the payload's stream");
        check(Array.isArray(detail.body.attempts), "attempts is a list");
      });
      expectError(await ctx.call("GET", `/webhooks/deliveries/${randomUUID()}`), 404, "not_found");
    },
  },
  {
    name: "POST /webhooks/deliveries/{delivery_id}/retry: 202 pending; the same Idempotency-Key replays it, for another delivery is 422, malformed is 400; an unknown id is 404",
    tag: "behaviour",
    async run(ctx) {
      await withDelivery(ctx, async ({ deliveryId }) => {
        const idempotencyKey = randomUUID();
        const retry = (id: string, key: string) =>
          ctx.call("POST", `/webhooks/deliveries/${id}/retry`, { headers: keyed(key) });
        const first = await retry(deliveryId, idempotencyKey);
        expectStatus(first, 202);
        expectEqual([first.body.delivery_id, first.body.status], [deliveryId, "pending"], "the delivery queued");
        const again = await retry(deliveryId, idempotencyKey);
        expectStatus(again, 202);
        expectEqual(again.headers.get("idempotent-replayed"), "true", "Idempotent-Replayed of the replay");
        expectEqual(again.body, first.body, "the replayed body");
        expectError(await retry(randomUUID(), idempotencyKey), 422, "idempotency_key_reused");
        expectError(await retry(deliveryId, "two words"), 400, "invalid_fields");
        await inUse(ctx, 202, (key) => retry(deliveryId, key));
      });
      expectError(await ctx.call("POST", `/webhooks/deliveries/${randomUUID()}/retry`), 404, "not_found");
    },
  },
  {
    name: "POST /webhooks/recover: 202 with the count; since absent is 400 missing_fields, too old 400 invalid_fields; an Idempotency-Key replays, is 422 for another body and 409 while in use",
    tag: "behaviour",
    async run(ctx) {
      await withDelivery(ctx, async ({ webhookId }) => {
        const since = new Date(Date.now() - 3_600_000).toISOString();
        const recover = (body: Record<string, unknown>, key?: string) =>
          ctx.call("POST", "/webhooks/recover", { body, ...(key ? { headers: keyed(key) } : {}) });
        expectError(await recover({ webhook_id: webhookId }), 400, "missing_fields");
        expectError(
          await recover({ webhook_id: webhookId, since: new Date(Date.now() - 8 * 86_400_000).toISOString() }),
          400,
          "invalid_fields",
        );
        expectError(await recover({ webhook_id: randomUUID(), since }), 404, "not_found");
        const idempotencyKey = randomUUID();
        const first = await recover({ webhook_id: webhookId, since }, idempotencyKey);
        expectStatus(first, 202);
        check(Number.isInteger(first.body.queued) && typeof first.body.has_more === "boolean", "queued and has_more");
        const again = await recover({ webhook_id: webhookId, since }, idempotencyKey);
        expectEqual([again.status, again.headers.get("idempotent-replayed")], [202, "true"], "the replay");
        expectEqual(again.body, first.body, "the replayed body");
        expectError(
          await recover({ webhook_id: webhookId, since: new Date().toISOString() }, idempotencyKey),
          422,
          "idempotency_key_reused",
        );
        await inUse(ctx, 202, (key) => recover({ webhook_id: webhookId, since }, key));
      });
    },
  },
];
