import { useEffect, useRef } from "preact/hooks";
import { api, type Mode, type Schemas } from "../api.ts";
import { FilterToolbar } from "../components/filter-toolbar.tsx";
import { Link } from "../components/link.tsx";
import { type Column, DataTable } from "../components/data-table.tsx";
import { PagedTable } from "../components/loaded-table.tsx";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { Time } from "../format.tsx";
import { useLoad, usePagedLoad } from "../hooks.ts";
import { modePath, useQuery } from "../route.ts";

type Delivery = Schemas["DashboardDelivery"];
type Outcome = Schemas["DeliveryStatus"];
const OUTCOMES: Outcome[] = ["pending", "succeeded", "failed"];
const PAGE = 20;

function result(status: number | null, error: string | null): string {
  if (status !== null) return `HTTP ${status}`;
  return error ?? "—";
}

const COLUMNS = [
  {
    header: "Event",
    cell: (delivery: Delivery) => (
      <>
        {delivery.event_type}
        <br />
        <code class="small">{delivery.event_id}</code>
      </>
    ),
  },
  {
    header: "Outcome",
    cell: (delivery: Delivery) => <span class={`badge ${delivery.status}`}>{delivery.status}</span>,
  },
  { header: "Attempts", cell: (delivery: Delivery) => delivery.attempts },
  { header: "Last result", cell: (delivery: Delivery) => result(delivery.response_status, delivery.error) },
  { header: "Last attempt", cell: (delivery: Delivery) => <Time iso={delivery.last_attempt_at} /> },
  { header: "Next retry", cell: (delivery: Delivery) => <Time iso={delivery.next_attempt_at} /> },
];

type Attempt = Schemas["DashboardDeliveryAttempt"];

/** What sent an attempt: the retry schedule, or a retry, recover (by an API key) or the operator. */
function sentBy(attempt: Attempt): string {
  if (attempt.trigger === "schedule") return "schedule";
  const who = attempt.requested_by ? ` by ${attempt.requested_by}` : "";
  return `${attempt.trigger}${who}`;
}

const ATTEMPT_COLUMNS: Column<Attempt>[] = [
  {
    header: "#",
    cell: (attempt) => (attempt.series === 0 ? attempt.attempt : `${attempt.attempt} (again ×${attempt.series})`),
  },
  { header: "Time", cell: (attempt) => <Time iso={attempt.attempted_at} /> },
  { header: "Sent by", cell: (attempt) => sentBy(attempt) },
  { header: "Result", cell: (attempt) => result(attempt.response_status, attempt.error) },
  { header: "Duration", cell: (attempt) => (attempt.duration_ms === null ? "—" : `${attempt.duration_ms} ms`) },
  // The receiver's own words (its first 1 KiB), as text: never rendered as HTML.
  {
    header: "Receiver's answer",
    cell: (attempt) =>
      attempt.response_body === null ? "—" : <code class="small answer">{attempt.response_body}</code>,
  },
  { header: "Signature header", cell: (attempt) => <code class="small">{attempt.signature}</code> },
];

/** One webhook's deliveries, read-only: each event's outcome, its attempts and signed payload. */
export function DeliveryLog({ mode, webhookId }: { mode: Mode; webhookId: string }) {
  // The filter, the page and the open delivery in the address (?outcome=&offset=&delivery=).
  const [query, setQuery] = useQuery();
  const asked = query.get("outcome") ?? "";
  const outcome = (OUTCOMES as readonly string[]).includes(asked) ? (asked as Outcome) : "";
  const setOutcome = (next: Outcome | "") => setQuery({ outcome: next, offset: null });
  const open = query.get("delivery");
  const setOpen = (next: string | null) => setQuery({ delivery: next });
  const deliveries = usePagedLoad(
    (page) =>
      api.GET("/modes/{mode}/webhooks/{webhook_id}/deliveries", {
        params: {
          path: { mode, webhook_id: webhookId },
          query: { ...page, ...(outcome ? { outcome } : {}) },
        },
      }),
    [mode, webhookId, outcome],
    PAGE,
  );
  return (
    <>
      <p>
        <Link href={modePath(mode, "webhooks")}>← Webhooks</Link>
      </p>
      <h1>Delivery log</h1>
      <p class="muted">
        Webhook <code>{webhookId}</code>. Read-only: deliveries are retried by the server on its schedule.
      </p>
      <FilterToolbar
        label="Outcome"
        value={outcome}
        values={OUTCOMES}
        onChange={setOutcome}
        onRefresh={deliveries.reload}
      />
      <PagedTable
        paged={deliveries}
        total={deliveries.data?.total}
        noun={{ one: "delivery", other: "deliveries" }}
        what="deliveries"
        empty={`No deliveries${outcome ? ` with outcome ${outcome}` : ""}.`}
        rows={deliveries.data?.deliveries}
        columns={COLUMNS}
        rowKey={(delivery) => delivery.delivery_id}
        actionsHeader="Details"
        actions={(delivery) => (
          <button
            type="button"
            class="secondary"
            aria-expanded={open === delivery.delivery_id}
            onClick={() => setOpen(open === delivery.delivery_id ? null : delivery.delivery_id)}
          >
            Attempts
          </button>
        )}
      />
      {open && <DeliveryDetail mode={mode} webhookId={webhookId} deliveryId={open} round={deliveries.data} />}
    </>
  );
}

/**
 * One delivery's attempts and payload. It is read again whenever the list is (`round`: the list's
 * answer), so Refresh brings both up to date; on opening it scrolls into view and takes focus.
 */
function DeliveryDetail({
  mode,
  webhookId,
  deliveryId,
  round,
}: {
  mode: Mode;
  webhookId: string;
  deliveryId: string;
  round: unknown;
}) {
  const detail = useLoad(
    () =>
      api.GET("/modes/{mode}/webhooks/{webhook_id}/deliveries/{delivery_id}", {
        params: { path: { mode, webhook_id: webhookId, delivery_id: deliveryId } },
      }),
    [mode, webhookId, deliveryId],
  );
  const { reload } = detail;
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else reload();
  }, [round, reload]);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.scrollIntoView({ block: "start" });
    heading.current?.focus();
  }, [deliveryId]);
  const data = detail.data;
  return (
    <section class="panel" aria-labelledby="delivery-title">
      <h2 id="delivery-title" tabIndex={-1} ref={heading}>
        Delivery {deliveryId}
      </h2>
      <ErrorNote message={detail.error} />
      {!data && !detail.error && <Loading what="the delivery" />}
      {data && (
        <>
          <h3>Attempts</h3>
          {data.attempts.length === 0 && (
            <p>
              No attempt yet; the first is due <Time iso={data.delivery.next_attempt_at} />.
            </p>
          )}
          {data.attempts.length > 0 && (
            <DataTable
              rows={data.attempts}
              rowKey={(attempt) => `${attempt.series}-${attempt.attempt}`}
              columns={ATTEMPT_COLUMNS}
            />
          )}
          {data.delivery.next_attempt_at && (
            <p>
              Next retry: <Time iso={data.delivery.next_attempt_at} />
            </p>
          )}
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
