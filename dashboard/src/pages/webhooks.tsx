import { api, type Mode, type Schemas } from "../api.ts";
import { Link } from "../components/link.tsx";
import { LoadedTable } from "../components/loaded-table.tsx";
import { Time } from "../format.tsx";
import { useLoad } from "../hooks.ts";
import { modePath } from "../route.ts";
import { DeliveryLog } from "./deliveries.tsx";

type Webhook = Schemas["WebhookSummary"];

/** Webhooks of the mode, or one webhook's delivery log when `webhookId` is set. */
export function WebhooksPage({ mode, webhookId }: { mode: Mode; webhookId?: string }) {
  if (webhookId) return <DeliveryLog mode={mode} webhookId={webhookId} />;
  return <WebhookList mode={mode} />;
}

/**
 * Read-only, as the spec has it (§6, "Delivery and retries"): webhooks are registered and deleted
 * only through the API, with a key of the mode; the page says how.
 */
function WebhookList({ mode }: { mode: Mode }) {
  const webhooks = useLoad(() => api.GET("/modes/{mode}/webhooks", { params: { path: { mode } } }), [mode]);
  const logLink = (webhook: Webhook, text: string) => (
    <Link href={modePath(mode, "webhooks", webhook.webhook_id)}>{text}</Link>
  );
  return (
    <>
      <h1>Webhooks ({mode})</h1>
      <h2>Endpoints</h2>
      <LoadedTable
        loaded={webhooks}
        what="webhooks"
        empty={`No ${mode} webhooks yet.`}
        rows={webhooks.data?.webhooks}
        columns={[
          { header: "URL", cell: (webhook) => logLink(webhook, webhook.url) },
          { header: "Events", cell: (webhook) => webhook.events.join(", ") },
          { header: "Active", cell: (webhook) => (webhook.active ? "yes" : "no") },
          { header: "Created", cell: (webhook) => <Time iso={webhook.created_at} /> },
        ]}
        rowKey={(webhook) => webhook.webhook_id}
        actions={(webhook) => logLink(webhook, "Delivery log")}
      />
      <ThroughTheApi mode={mode} />
    </>
  );
}

function ThroughTheApi({ mode }: { mode: Mode }) {
  const base = `${location.origin}/api/v1`;
  const keyVariable = "$LIVE_STREAM_HOSTING_API_KEY";
  const curl = [
    `curl -X POST ${base}/webhooks \\`,
    `  -H "Authorization: Bearer ${keyVariable}" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{"url": "https://hooks.example.com/live", "events": ["stream.started", "stream.ended"]}'`,
    "",
    `curl -X DELETE "${base}/webhooks?id=<webhook_id>" \\`,
    `  -H "Authorization: Bearer ${keyVariable}"`,
  ].join("\n");
  const sdk = [
    `import { createClient } from "@live-stream-hosting/sdk";`,
    "",
    `const client = createClient({ baseUrl: "${base}", apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY });`,
    `const { webhook_id, secret } = await client.webhooks.create({`,
    `  url: "https://hooks.example.com/live",`,
    `  events: ["stream.started", "stream.ended"],`,
    "});",
    "await client.webhooks.delete(webhook_id);",
  ].join("\n");
  return (
    <section aria-labelledby="through-api">
      <h2 id="through-api">Registering and deleting</h2>
      <p>
        Webhooks are registered and deleted only through the API, with a <code>svc_{mode}_…</code> key holding the{" "}
        <code>webhooks:write</code> scope: <code>POST /api/v1/webhooks</code> (its answer carries the signing secret,
        once) and <code>DELETE /api/v1/webhooks?id=…</code>. This page shows them and their deliveries; retries are the
        server's, and <code>live-stream-hosting listen</code> forwards test events to your machine.
      </p>
      <h3>curl</h3>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling block must take focus, so keyboard users can scroll it (axe: scrollable-region-focusable). */}
      <pre class="code" tabIndex={0}>
        <code>{curl}</code>
      </pre>
      <h3>SDK</h3>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling block must take focus, so keyboard users can scroll it (axe: scrollable-region-focusable). */}
      <pre class="code" tabIndex={0}>
        <code>{sdk}</code>
      </pre>
    </section>
  );
}
