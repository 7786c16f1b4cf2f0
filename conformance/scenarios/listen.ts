/**
 * The partner tools' operations (the contract's additions to the spec's index): the test-mode
 * event stream of `live-stream-hosting listen` and the delivery list `trigger` reports from.
 */
import { randomUUID } from "node:crypto";
import { check, expectEqual, expectError, expectStatus } from "../check.ts";
import type { Scenario, ScenarioContext } from "../scenario.ts";
import { startStream } from "./common.ts";

const HOOK = "https://hooks.conformance.example/listen";

/** The messages (`id:`, `event:`, `data:` lines) of an event stream's text; comments left out. */
function messages(text: string): Array<{ id: string; event: string; data: string }> {
  return text
    .split("\n\n")
    .map((block) =>
      Object.fromEntries(
        block
          .split("\n")
          .filter((line) => !line.startsWith(":") && line.includes(":"))
          .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]),
      ),
    )
    .filter(
      (fields): fields is { id: string; event: string; data: string } =>
        typeof fields.id === "string" && typeof fields.event === "string" && typeof fields.data === "string",
    );
}

/** Each message is a delivery body (`WebhookEvent`) whose id and type its `id:` and `event:` lines repeat. */
type Listened = { id: string; type: string; data: { stream_id: string } };

function checkMessages(ctx: ScenarioContext, text: string): Listened[] {
  const validate = ctx.contract.compile(ctx.contract.doc.components.schemas.WebhookEvent);
  return messages(text).map((message) => {
    const body = JSON.parse(message.data) as Listened;
    check(validate(body), `a listened event is not a WebhookEvent: ${message.data.slice(0, 200)}`);
    expectEqual([message.id, message.event], [body.id, body.type], "the message's id and event lines");
    return body;
  });
}

export const listenScenarios: Scenario[] = [
  {
    name: "GET /webhooks/listen streams the brand's test-mode events as delivery bodies, and resumes after Last-Event-ID",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      // A brand of its own: no event of another scenario comes in between.
      const { key } = await (await ctx.tenant()).key();
      const ids: string[] = [];
      // The stream begins with the events after the connection: the streams start once it is open.
      let opened!: () => void;
      const open = new Promise<void>((resolve) => (opened = resolve));
      const listened = ctx.call("GET", "/webhooks/listen?events=stream.started,stream.ended", {
        key,
        stream: { opened, until: (text) => messages(text).length >= 3 },
      });
      await open;
      ids.push(await startStream(ctx, key));
      expectStatus(await ctx.call("DELETE", `/streams/${ids[0]}`, { key }), 200);
      ids.push(await startStream(ctx, key));
      const answer = await listened;
      expectStatus(answer, 200);
      const events = checkMessages(ctx, answer.text);
      // Events of one moment come in any order (the server's clock may not have moved between them).
      expectEqual(
        events.map((event) => `${event.type} ${event.data.stream_id}`).sort(),
        [`stream.started ${ids[0]}`, `stream.ended ${ids[0]}`, `stream.started ${ids[1]}`].sort(),
        "the events",
      );

      // Resumed after the first event: the others come again; the one named does not.
      const resumed = await ctx.call("GET", "/webhooks/listen", {
        key,
        headers: { "last-event-id": events[0]!.id },
        stream: { until: (text) => messages(text).length >= 2 },
      });
      expectStatus(resumed, 200);
      expectEqual(
        checkMessages(ctx, resumed.text)
          .map((event) => event.id)
          .sort(),
        [events[1]!.id, events[2]!.id].sort(),
        "the events after Last-Event-ID",
      );
      expectStatus(await ctx.call("DELETE", `/streams/${ids[1]}`, { key }), 200);
    },
  },
  {
    name: "GET /webhooks/listen: invalid_fields for an unknown event type or Last-Event-ID, test_mode_only for a live key",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      for (const query of ["events=stream.paused", "events=", "events=stream.started,stream.started"]) {
        expectError(await ctx.call("GET", `/webhooks/listen?${query}`), 400, "invalid_fields");
      }
      for (const lastEventId of [`evt_${"0".repeat(32)}`, "not-an-event-id"]) {
        expectError(
          await ctx.call("GET", "/webhooks/listen", { headers: { "last-event-id": lastEventId } }),
          400,
          "invalid_fields",
        );
      }
      const live = (await (await ctx.tenant()).key({ environment: "live" })).key;
      const refused = await ctx.call("GET", "/webhooks/listen", { key: live });
      expectError(refused, 403, "test_mode_only");
      // The same brand's test key is served.
      expectStatus(await ctx.call("GET", "/webhooks/listen"), 200);
    },
  },
  {
    name: "GET /webhooks/listen: a brand's 11th open stream is 429 listen_limit; closed, their places are free",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      // A brand of its own, whose ten streams (the documented bound) no other scenario shares.
      const { key } = await (await ctx.tenant()).key();
      let leave = false;
      const opens: Promise<void>[] = [];
      const held = Array.from({ length: 10 }, () => {
        let opened!: () => void;
        opens.push(new Promise<void>((resolve) => (opened = resolve)));
        return ctx.call("GET", "/webhooks/listen", { key, stream: { opened, until: () => leave } });
      });
      await Promise.all(opens);
      expectError(await ctx.call("GET", "/webhooks/listen", { key }), 429, "listen_limit");

      // An event wakes every reader, which then leaves.
      leave = true;
      const streamId = await startStream(ctx, key);
      for (const exchange of await Promise.all(held)) expectStatus(exchange, 200);
      expectStatus(await ctx.call("DELETE", `/streams/${streamId}`, { key }), 200);
      // The server sees each close soon after: a stream opens again.
      let again = await ctx.call("GET", "/webhooks/listen", { key });
      for (let tries = 0; again.status === 429 && tries < 40; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        again = await ctx.call("GET", "/webhooks/listen", { key });
      }
      expectStatus(again, 200);
    },
  },
  {
    name: "GET /webhooks/deliveries lists a stream's webhook deliveries; invalid_fields for a stream_id that is not a UUID",
    tag: "behaviour",
    async run(ctx) {
      for (const streamId of ["not-a-uuid", "7c0e8f4a"])
        expectError(await ctx.call("GET", `/webhooks/deliveries?stream_id=${streamId}`), 400, "invalid_fields");
      const none = await ctx.call("GET", `/webhooks/deliveries?stream_id=${randomUUID()}`);
      expectStatus(none, 200);
      expectEqual(none.body.deliveries, [], "the deliveries of a stream that does not exist");

      const webhook = await ctx.call("POST", "/webhooks", { body: { url: HOOK, events: ["stream.started"] } });
      expectStatus(webhook, 201);
      try {
        const streamId = await startStream(ctx);
        const listed = await ctx.call("GET", `/webhooks/deliveries?stream_id=${streamId}`);
        expectStatus(listed, 200);
        const ours = listed.body.deliveries.filter(
          (delivery: { webhook_id: string }) => delivery.webhook_id === webhook.body.webhook_id,
        );
        expectEqual(
          ours.map((delivery: { event_type: string; stream_id: string; url: string }) => [
            delivery.event_type,
            delivery.stream_id,
            delivery.url,
          ]),
          [["stream.started", streamId, HOOK]],
          "the stream's delivery to the new webhook",
        );
        expectStatus(await ctx.call("DELETE", `/streams/${streamId}`), 200);
      } finally {
        expectStatus(await ctx.call("DELETE", `/webhooks?id=${webhook.body.webhook_id}`), 200);
      }
    },
  },
];
