import { useState } from "preact/hooks";
import { api, type Mode, type Schemas } from "../api.ts";
import { Link } from "../components/link.tsx";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { Pager } from "../components/pager.tsx";
import { formatTime } from "../format.ts";
import { useLoad } from "../hooks.ts";
import { modePath } from "../route.ts";

type Outcome = Schemas["DeliveryStatus"];
const OUTCOMES: Outcome[] = ["pending", "succeeded", "failed"];
const PAGE = 20;

function result(status: number | null, error: string | null): string {
  if (status !== null) return `HTTP ${status}`;
  return error ?? "—";
}

/** One webhook's deliveries, read-only: each event's outcome, its attempts and signed payload. */
export function DeliveryLog({ mode, webhookId }: { mode: Mode; webhookId: string }) {
  const [outcome, setOutcome] = useState<Outcome | "">("");
  const [offset, setOffset] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const deliveries = useLoad(
    () =>
      api.GET("/modes/{mode}/webhooks/{webhook_id}/deliveries", {
        params: {
          path: { mode, webhook_id: webhookId },
          query: { limit: PAGE, offset, ...(outcome ? { outcome } : {}) },
        },
      }),
    [mode, webhookId, outcome, offset],
  );
  const list = deliveries.data?.deliveries ?? [];
  return (
    <>
      <p>
        <Link href={modePath(mode, "webhooks")}>← Webhooks</Link>
      </p>
      <h1>Delivery log</h1>
      <p class="muted">
        Webhook <code>{webhookId}</code>. Read-only: deliveries are retried by the server on its schedule.
      </p>
      <div class="toolbar">
        <div class="field">
          <label for="field-outcome">Outcome</label>
          <select
            id="field-outcome"
            value={outcome}
            onChange={(e) => {
              setOutcome(e.currentTarget.value as Outcome | "");
              setOffset(0);
            }}
          >
            <option value="">All</option>
            {OUTCOMES.map((value) => (
              <option value={value} key={value}>
                {value}
              </option>
            ))}
          </select>
        </div>
        <button type="button" class="secondary" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      <ErrorNote message={deliveries.error} />
      {!deliveries.data && !deliveries.error && <Loading what="deliveries" />}
      {deliveries.data && list.length === 0 && <p>No deliveries{outcome ? ` with outcome ${outcome}` : ""}.</p>}
      {list.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Outcome</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last result</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Next retry</th>
                <th scope="col">
                  <span class="visually-hidden">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((delivery) => (
                <tr key={delivery.delivery_id}>
                  <td>
                    {delivery.event_type}
                    <br />
                    <code class="small">{delivery.event_id}</code>
                  </td>
                  <td>
                    <span class={`badge ${delivery.status}`}>{delivery.status}</span>
                  </td>
                  <td>{delivery.attempts}</td>
                  <td>{result(delivery.response_status, delivery.error)}</td>
                  <td>{formatTime(delivery.last_attempt_at)}</td>
                  <td>{formatTime(delivery.next_attempt_at)}</td>
                  <td>
                    <button
                      type="button"
                      class="secondary"
                      aria-expanded={open === delivery.delivery_id}
                      onClick={() => setOpen(open === delivery.delivery_id ? null : delivery.delivery_id)}
                    >
                      Attempts
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {deliveries.data && <Pager offset={offset} limit={PAGE} shown={list.length} onOffset={setOffset} />}
      {open && <DeliveryDetail mode={mode} webhookId={webhookId} deliveryId={open} />}
    </>
  );
}

function DeliveryDetail({ mode, webhookId, deliveryId }: { mode: Mode; webhookId: string; deliveryId: string }) {
  const detail = useLoad(
    () =>
      api.GET("/modes/{mode}/webhooks/{webhook_id}/deliveries/{delivery_id}", {
        params: { path: { mode, webhook_id: webhookId, delivery_id: deliveryId } },
      }),
    [mode, webhookId, deliveryId],
  );
  const data = detail.data;
  return (
    <section class="panel" aria-labelledby="delivery-title">
      <h2 id="delivery-title">Delivery {deliveryId}</h2>
      <ErrorNote message={detail.error} />
      {!data && !detail.error && <Loading what="the delivery" />}
      {data && (
        <>
          <h3>Attempts</h3>
          {data.attempts.length === 0 && (
            <p>No attempt yet; the first is due {formatTime(data.delivery.next_attempt_at)}.</p>
          )}
          {data.attempts.length > 0 && (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Time</th>
                    <th scope="col">Result</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Signature header</th>
                  </tr>
                </thead>
                <tbody>
                  {data.attempts.map((attempt) => (
                    <tr key={attempt.attempt}>
                      <td>{attempt.attempt}</td>
                      <td>{formatTime(attempt.attempted_at)}</td>
                      <td>{result(attempt.response_status, attempt.error)}</td>
                      <td>{attempt.duration_ms === null ? "—" : `${attempt.duration_ms} ms`}</td>
                      <td>
                        <code class="small">{attempt.signature}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {data.delivery.next_attempt_at && <p>Next retry: {formatTime(data.delivery.next_attempt_at)}</p>}
          <h3>Signed payload (the request body as sent)</h3>
          <section aria-label="Signed payload">
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take keyboard focus (axe: scrollable-region-focusable) */}
            <pre class="payload" tabIndex={0}>
              {data.payload}
            </pre>
          </section>
        </>
      )}
    </section>
  );
}
