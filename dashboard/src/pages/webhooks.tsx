import { useState } from "preact/hooks";
import { webhookEventTypeValues } from "../../../generated/api.ts";
import { api, type Mode, type Schemas } from "../api.ts";
import { ConfirmButton } from "../components/confirm.tsx";
import { Link } from "../components/link.tsx";
import { ErrorNote, Loading, ReadOnlyNote } from "../components/notes.tsx";
import { OnceSecret } from "../components/once-secret.tsx";
import { formatTime } from "../format.ts";
import { useAction, useLoad } from "../hooks.ts";
import { modePath } from "../route.ts";
import { canChange, useSession } from "../session.ts";
import { DeliveryLog } from "./deliveries.tsx";

type EventType = Schemas["WebhookEventType"];

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
      <ErrorNote message={webhooks.error ?? remove.error} />
      {!webhooks.data && !webhooks.error && <Loading what="webhooks" />}
      {webhooks.data && webhooks.data.webhooks.length === 0 && <p>No {mode} webhooks yet.</p>}
      {webhooks.data && webhooks.data.webhooks.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Active</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {webhooks.data.webhooks.map((webhook) => (
                <tr key={webhook.webhook_id}>
                  <td>
                    <Link href={modePath(mode, "webhooks", webhook.webhook_id)}>{webhook.url}</Link>
                  </td>
                  <td>{webhook.events.join(", ")}</td>
                  <td>{webhook.active ? "yes" : "no"}</td>
                  <td>{formatTime(webhook.created_at)}</td>
                  <td class="actions">
                    <Link href={modePath(mode, "webhooks", webhook.webhook_id)}>Delivery log</Link>
                    {editable && (
                      <ConfirmButton
                        label="Delete"
                        question={`Delete the webhook ${webhook.url}? No more events are sent to it.`}
                        confirmLabel="Delete webhook"
                        disabled={remove.busy}
                        onConfirm={() => remove.run(webhook.webhook_id)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
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
  const toggle = (type: EventType, on: boolean) =>
    setEvents((current) => (on ? [...current, type] : current.filter((t) => t !== type)));
  return (
    <form
      class="panel"
      aria-labelledby="register-title"
      onSubmit={(event) => {
        event.preventDefault();
        void register.run();
      }}
    >
      <h2 id="register-title">Register a {mode} webhook</h2>
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
      <fieldset>
        <legend>Events</legend>
        {webhookEventTypeValues.map((type) => (
          <label class="check" key={type}>
            <input
              type="checkbox"
              checked={events.includes(type)}
              onChange={(e) => toggle(type, e.currentTarget.checked)}
            />
            {type}
          </label>
        ))}
      </fieldset>
      <ErrorNote message={register.error} />
      <button type="submit" disabled={register.busy || events.length === 0}>
        Register webhook
      </button>
    </form>
  );
}
