import { api, type Mode, type Schemas } from "../api.ts";
import { Link } from "../components/link.tsx";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { countOf, formatCents, formatDuration, Time } from "../format.tsx";
import { useLoad } from "../hooks.ts";
import { modePath } from "../route.ts";

type Timeline = Schemas["DashboardStreamTimeline"];
type Entry = Schemas["DashboardTimelineEntry"];
type Delivery = Schemas["DashboardStreamDelivery"];

/** What entering a status meant: the stream's first status is its creation; billing is live mode's. */
function statusWords(status: Schemas["StreamStatus"], first: boolean, billed: boolean): string {
  if (first && status === "preparing") return "Created, waiting for the host to join (not billed)";
  if (first && status === "live") return "Created, live at once (test mode)";
  if (first && status === "error") return "Created, but the launch failed";
  if (status === "live") return billed ? "Went live: billing starts" : "Went live";
  if (status === "ended") return billed ? "Ended: billing stops" : "Ended";
  return billed ? "Failed: billing stops" : "Failed";
}

/**
 * A stream's timeline (GET …/streams/{id}/timeline): what it cost, and what happened to it, oldest
 * first. It is read again whenever the stream is (`round`: the stream as last read).
 */
export function StreamTimeline({ mode, streamId, round }: { mode: Mode; streamId: string; round: unknown }) {
  const timeline = useLoad(
    () => api.GET("/modes/{mode}/streams/{id}/timeline", { params: { path: { mode, id: streamId } } }),
    [mode, streamId, round],
  );
  const data = timeline.data;
  return (
    <>
      <ErrorNote message={timeline.error} />
      {!data && !timeline.error && <Loading what="the timeline" />}
      {data && <Billing timeline={data} />}
      {data && <Entries timeline={data} />}
    </>
  );
}

function Billing({ timeline }: { timeline: Timeline }) {
  const { billing } = timeline;
  const streamed = timeline.duration_seconds === null ? "Never live" : formatDuration(timeline.duration_seconds);
  if (!billing.billed)
    return (
      <section aria-labelledby="billing-title">
        <h2 id="billing-title">Billing</h2>
        <dl class="fields">
          <dt>Time streamed</dt>
          <dd data-testid="streamed">{streamed}</dd>
        </dl>
        <p class="note">A test stream is simulated and never billed.</p>
      </section>
    );
  const final = billing.settled ? "" : " so far";
  return (
    <section aria-labelledby="billing-title">
      <h2 id="billing-title">Billing</h2>
      <dl class="fields">
        <dt>Time streamed</dt>
        <dd data-testid="streamed">{streamed}</dd>
        <dt>Price</dt>
        <dd>{formatCents(billing.price_per_minute_cents)} per streamed minute</dd>
        <dt>Hold</dt>
        <dd>
          {formatCents(billing.hold_cents)}
          {billing.settled ? ", released" : ", held from your credits"}
        </dd>
        <dt>Billed minutes{final}</dt>
        <dd>{billing.billed_minutes ?? "—"}</dd>
        <dt>Charge{final}</dt>
        <dd data-testid="charge">{billing.charged_cents === null ? "—" : formatCents(billing.charged_cents)}</dd>
      </dl>
      <p class="muted">
        Each begun minute from going live to the end is billed; time preparing is not. The hold, the planned minutes at
        the price, is released when the stream ends, and the charge taken from the balance.
      </p>
    </section>
  );
}

function Entries({ timeline }: { timeline: Timeline }) {
  const mode = timeline.mode;
  const firstStatus = timeline.entries.find((entry) => entry.kind === "status");
  return (
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      <ol class="timeline">
        {timeline.entries.map((entry, index) => (
          // The list is read whole each time, in the server's order: its place names an entry.
          <li key={index}>
            <Time iso={entry.at} />
            <div class="what">
              <EntryText entry={entry} first={entry === firstStatus} billed={timeline.billing.billed} />
              {entry.kind === "event" && (
                <EventDeliveries
                  mode={mode}
                  deliveries={timeline.deliveries.filter((one) => one.event_id === entry.event_id)}
                />
              )}
            </div>
          </li>
        ))}
      </ol>
      {timeline.deliveries_total > timeline.deliveries.length && (
        <p class="muted">
          The first {timeline.deliveries.length} of {countOf(timeline.deliveries_total, "delivery", "deliveries")} are
          listed; every webhook's delivery log has them all.
        </p>
      )}
    </section>
  );
}

function EntryText({ entry, first, billed }: { entry: Entry; first: boolean; billed: boolean }) {
  switch (entry.kind) {
    case "status":
      return (
        <>
          <span class={`badge ${entry.status}`}>{entry.status}</span> {statusWords(entry.status, first, billed)}
        </>
      );
    case "billing":
      if (entry.action === "hold")
        return (
          <>
            Held {formatCents(entry.amount_cents)} from the credits
            {entry.minutes === null ? "" : ` for the ${countOf(entry.minutes, "planned minute")}`}
          </>
        );
      if (entry.action === "charge")
        return (
          <>
            Charged {formatCents(entry.amount_cents)} for {countOf(entry.minutes ?? 0, "billed minute")}
          </>
        );
      return <>Released the hold of {formatCents(entry.amount_cents)}</>;
    case "event":
      return (
        <>
          Event <code>{entry.event_type}</code> <code class="small">{entry.event_id}</code>
        </>
      );
  }
}

function result(delivery: Delivery): string {
  const tries = countOf(delivery.attempts, "attempt");
  if (delivery.response_status !== null) return `HTTP ${delivery.response_status}, ${tries}`;
  if (delivery.error) return `${delivery.error}, ${tries}`;
  return tries;
}

function EventDeliveries({ mode, deliveries }: { mode: Mode; deliveries: Delivery[] }) {
  if (deliveries.length === 0) return <p class="muted">No webhook was subscribed to it.</p>;
  return (
    <ul class="deliveries">
      {deliveries.map((delivery) => (
        <li key={delivery.delivery_id}>
          <span class={`badge ${delivery.status}`}>{delivery.status}</span> <span class="url">{delivery.url}</span>
          <span class="muted"> · {result(delivery)}</span>
          {delivery.next_attempt_at && (
            <span class="muted">
              {" "}
              · next try <Time iso={delivery.next_attempt_at} />
            </span>
          )}{" "}
          {delivery.webhook_deleted ? (
            <span class="muted">(webhook deleted)</span>
          ) : (
            <Link href={`${modePath(mode, "webhooks", delivery.webhook_id)}?delivery=${delivery.delivery_id}`}>
              Delivery log<span class="visually-hidden"> of {delivery.url}</span>
            </Link>
          )}
        </li>
      ))}
    </ul>
  );
}
