import { useState } from "preact/hooks";
import { webhookEventTypeValues } from "../../../generated/api.ts";
import { api, type Mode, type Schemas } from "../api.ts";
import { ActionForm } from "../components/action-form.tsx";
import { CheckboxGroup } from "../components/checkbox-group.tsx";
import { Link } from "../components/link.tsx";
import { LoadedTable } from "../components/loaded-table.tsx";
import { ReadOnlyNote } from "../components/notes.tsx";
import { OnceSecret } from "../components/once-secret.tsx";
import { RemoveRowButton } from "../components/remove-row-button.tsx";
import { formatTime } from "../format.ts";
import { useAction, useLoad } from "../hooks.ts";
import { modePath } from "../route.ts";
import { canChange, useSession } from "../session.ts";
import { DeliveryLog } from "./deliveries.tsx";

type EventType = Schemas["WebhookEventType"];
type Webhook = Schemas["WebhookSummary"];

/** Webhooks of the mode, or one webhook's delivery log when `webhookId` is set. */
export function WebhooksPage({ mode, webhookId }: { mode: Mode; webhookId?: string }) {
  if (webhookId) return <DeliveryLog mode={mode} webhookId={webhookId} />;
  return <WebhookList mode={mode} />;
}

function WebhookList({ mode }: { mode: Mode }) {
  const { session } = useSession();
  const webhooks = useLoad(() => api.GET("/modes/{mode}/webhooks", { params: { path: { mode } } }), [mode]);
  const [registered, setRegistered] = useState<Schemas["WebhookRegistered"] | null>(null);
  const remove = useAction(
    (webhookId: string) =>
      api.DELETE("/modes/{mode}/webhooks/{webhook_id}", { params: { path: { mode, webhook_id: webhookId } } }),
    () => webhooks.reload(),
  );
  const editable = canChange(session);
  const logLink = (webhook: Webhook, text: string) => (
    <Link href={modePath(mode, "webhooks", webhook.webhook_id)}>{text}</Link>
  );
  return (
    <>
      <h1>Webhooks ({mode})</h1>
      {!editable && <ReadOnlyNote role={session.member?.role ?? "viewer"} />}
      {registered ? (
        <OnceSecret
          label={`Signing secret of ${registered.url}`}
          value={registered.secret}
          onDone={() => setRegistered(null)}
        />
      ) : (
        editable && (
          <RegisterWebhook mode={mode} onRegistered={(webhook) => (setRegistered(webhook), webhooks.reload())} />
        )
      )}
      <h2>Endpoints</h2>
      <LoadedTable
        loaded={webhooks}
        actionError={remove.error}
        what="webhooks"
        empty={`No ${mode} webhooks yet.`}
        rows={webhooks.data?.webhooks}
        columns={[
          { header: "URL", cell: (webhook) => logLink(webhook, webhook.url) },
          { header: "Events", cell: (webhook) => webhook.events.join(", ") },
          { header: "Active", cell: (webhook) => (webhook.active ? "yes" : "no") },
          { header: "Created", cell: (webhook) => formatTime(webhook.created_at) },
        ]}
        rowKey={(webhook) => webhook.webhook_id}
        actions={(webhook) => (
          <>
            {logLink(webhook, "Delivery log")}
            {editable && (
              <RemoveRowButton
                verb="Delete"
                row={webhook.url}
                kind="webhook"
                question={`Delete the webhook ${webhook.url}? No more events are sent to it.`}
                action={remove}
                id={webhook.webhook_id}
              />
            )}
          </>
        )}
      />
    </>
  );
}

function RegisterWebhook({
  mode,
  onRegistered,
}: {
  mode: Mode;
  onRegistered(webhook: Schemas["WebhookRegistered"]): void;
}) {
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<EventType[]>([...webhookEventTypeValues]);
  const register = useAction(
    () => api.POST("/modes/{mode}/webhooks", { params: { path: { mode } }, body: { url: url.trim(), events } }),
    (webhook: Schemas["WebhookRegistered"]) => {
      setUrl("");
      onRegistered(webhook);
    },
  );
  return (
    <ActionForm
      title={`Register a ${mode} webhook`}
      action={register}
      submitLabel="Register webhook"
      ready={events.length > 0}
    >
      <label>
        Endpoint URL
        <input
          type="url"
          required
          placeholder="https://hooks.example.com/live"
          aria-describedby="url-hint"
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </label>
      <p class="hint" id="url-hint">
        HTTPS on a public host.
      </p>
      <CheckboxGroup legend="Events" values={webhookEventTypeValues} checked={events} onChange={setEvents} />
    </ActionForm>
  );
}
