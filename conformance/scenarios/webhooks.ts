/** Webhook registration, listing and idempotent deletion (spec §4 webhooks endpoints). */
import { randomUUID } from "node:crypto";
import { check, expectEqual, expectError, expectStatus } from "../check.ts";
import type { Scenario, ScenarioContext } from "../scenario.ts";

const HOOK = "https://hooks.conformance.example/live";

export const webhookScenarios: Scenario[] = [
  {
    name: "DELETE /webhooks of an unknown id answers 200 deleted: true",
    tag: "contract",
    async run(ctx) {
      const answer = await ctx.call("DELETE", `/webhooks?id=${randomUUID()}`);
      expectStatus(answer, 200);
      expectEqual(answer.body.deleted, true, "deleted");
    },
  },
  {
    name: "a webhook's secret is shown once; deleting is idempotent and never 404",
    tag: "behaviour",
    async run(ctx) {
      const created = await ctx.call("POST", "/webhooks", {
        body: { url: HOOK, events: ["stream.started", "stream.ended"] },
      });
      expectStatus(created, 201);
      const id = created.body.webhook_id as string;
      check(created.body.secret.startsWith("whsec_"), "the secret does not begin whsec_");
      const listed = await ctx.call("GET", "/webhooks");
      const item = listed.body.webhooks.find((webhook: { webhook_id: string }) => webhook.webhook_id === id);
      check(item, "the new webhook is not listed");
      check(!("secret" in item), "the list shows the secret");
      for (let attempt = 0; attempt < 2; attempt++) {
        const deleted = await ctx.call("DELETE", `/webhooks?id=${id}`);
        expectStatus(deleted, 200);
        expectEqual(deleted.body, { webhook_id: id, deleted: true }, `delete #${attempt + 1}`);
      }
      const after = await ctx.call("GET", "/webhooks");
      check(
        !after.body.webhooks.some((webhook: { webhook_id: string }) => webhook.webhook_id === id),
        "a deleted webhook is still listed",
      );
      for (const unknown of [randomUUID(), "not-a-uuid"]) {
        expectEqual(
          (await ctx.call("DELETE", `/webhooks?id=${unknown}`)).body,
          { webhook_id: unknown, deleted: true },
          `delete of ${unknown}`,
        );
      }
    },
  },
  {
    name: "POST /webhooks: a brand's 17th webhook in a mode is 429 webhook_limit; deleting one frees a place",
    tag: "behaviour",
    needs: ["operator"],
    async run(ctx) {
      // A brand of its own, whose 16 webhooks (the documented bound) no other scenario shares.
      const { key } = await (await ctx.tenant()).key();
      const register = (path: string) =>
        ctx.call("POST", "/webhooks", { key, body: { url: `${HOOK}/${path}`, events: ["stream.started"] } });
      const ids: string[] = [];
      for (let i = 0; i < 16; i++) {
        const created = await register(`cap-${i}`);
        expectStatus(created, 201);
        ids.push(created.body.webhook_id as string);
      }
      expectError(await register("cap-16"), 429, "webhook_limit");
      expectEqual((await ctx.call("GET", "/webhooks", { key })).body.webhooks.length, 16, "webhooks listed");
      expectStatus(await ctx.call("DELETE", `/webhooks?id=${ids[0]}`, { key }), 200);
      expectStatus(await register("cap-16"), 201);
    },
  },
  {
    name: "webhook registration rejects bad input with the documented codes",
    tag: "behaviour",
    async run(ctx) {
      const cases: Array<[body: unknown, code: string]> = [
        [{ url: HOOK }, "missing_fields"],
        [{ events: ["stream.started"] }, "missing_fields"],
        [{ url: "http://hooks.conformance.example/live", events: ["stream.started"] }, "invalid_url"],
        ...LOCAL_URLS.filter((url) => !allowListed(ctx, url)).map((url): [unknown, string] => [
          { url, events: ["stream.started"] },
          "invalid_url",
        ]),
        [{ url: "https://user:pw@hooks.conformance.example/", events: ["stream.started"] }, "invalid_url"],
        [{ url: HOOK, events: [] }, "invalid_events"],
        [{ url: HOOK, events: ["stream.paused"] }, "invalid_events"],
        [{ url: HOOK, events: ["stream.ended", "stream.ended"] }, "invalid_events"],
        [{ url: HOOK, events: ["stream.ended"], secret: "whsec_mine" }, "invalid_fields"],
        [{ url: HOOK, events: ["stream.ended"], constructor: "x" }, "invalid_fields"],
        [[HOOK], "invalid_fields"],
      ];
      for (const [body, code] of cases) {
        const answer = await ctx.call("POST", "/webhooks", { body });
        const hint = "if the server allow-lists this host, run the suite with the same WEBHOOK_ALLOW_HOSTS";
        check(!(answer.status === 201 && code === "invalid_url"), `${JSON.stringify(body)} was accepted: ${hint}`);
        expectError(answer, 400, code);
      }
      expectError(
        await ctx.call("POST", "/webhooks", { rawBody: '{"url": "https://hooks.conformance.example",' }),
        400,
        "missing_fields",
      );
      expectError(await ctx.call("DELETE", "/webhooks"), 400, "missing_fields");
    },
  },
  {
    name: "hosts the operator allow-listed (WEBHOOK_ALLOW_HOSTS) are accepted, over http too; no others",
    tag: "behaviour",
    async run(ctx) {
      for (const url of LOCAL_URLS.filter((candidate) => allowListed(ctx, candidate))) {
        for (const accepted of [url, url.replace("https:", "http:")]) {
          const created = await ctx.call("POST", "/webhooks", { body: { url: accepted, events: ["stream.started"] } });
          expectStatus(created, 201);
          expectStatus(await ctx.call("DELETE", `/webhooks?id=${created.body.webhook_id}`), 200);
        }
      }
      const refused = await ctx.call("POST", "/webhooks", {
        body: { url: "http://hooks.conformance.example/live", events: ["stream.started"] },
      });
      expectError(refused, 400, "invalid_url");
    },
  },
];

/**
 * Local and private URLs the public-host rule refuses, unless the target's operator allow-listed
 * the host. A server that allow-lists one (local development) passes when the suite is told the
 * same list (WEBHOOK_ALLOW_HOSTS for a URL target); if it is not told, the refusal check fails
 * and says so.
 */
const LOCAL_URLS = [
  "https://localhost/hook",
  "https://10.1.2.3/hook",
  "https://2130706433/hook",
  "https://[2001:db8::1]/hook",
];

function allowListed(ctx: ScenarioContext, url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  return ctx.target.webhookAllowHosts.includes(host);
}
