import { useEffect, useRef } from "preact/hooks";
import { api, type Mode, type Schemas } from "../api.ts";
import { FilterSelect, Toolbar } from "../components/filter-toolbar.tsx";
import { Link } from "../components/link.tsx";
import { LoadedTable } from "../components/loaded-table.tsx";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { Time } from "../format.tsx";
import { useLoad } from "../hooks.ts";
import { modePath, useQuery } from "../route.ts";

type Entry = Schemas["RequestLogEntry"];
const CLASSES = ["2xx", "4xx", "5xx"] as const;
const METHODS = ["GET", "POST", "DELETE"] as const;
const PAGE = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A status as a badge of its class: successes green, refusals amber, failures red. */
function StatusBadge({ status }: { status: number }) {
  const kind = status >= 500 ? "failed" : status >= 400 ? "pending" : "succeeded";
  return <span class={`badge ${kind}`}>{status}</span>;
}

const COLUMNS = (mode: Mode) => [
  { header: "Time", cell: (entry: Entry) => <Time iso={entry.created_at} /> },
  { header: "Status", cell: (entry: Entry) => <StatusBadge status={entry.status} /> },
  {
    header: "Request",
    cell: (entry: Entry) => (
      <code class="small answer">
        {entry.method} {entry.path}
        {entry.query === null ? "" : `?${entry.query}`}
      </code>
    ),
  },
  { header: "Error code", cell: (entry: Entry) => (entry.error_code ? <code>{entry.error_code}</code> : "—") },
  {
    header: "Key",
    cell: (entry: Entry) => (
      <>
        {entry.key_name}
        {entry.key_hint && (
          <>
            <br />
            <code class="small">{entry.key_hint}</code>
          </>
        )}
      </>
    ),
  },
  { header: "Duration", cell: (entry: Entry) => `${entry.duration_ms} ms` },
  {
    header: "Request id",
    cell: (entry: Entry) => (
      <Link href={`${modePath(mode, "logs", entry.request_id)}${location.search}`}>
        <code class="small">{entry.request_id}</code>
      </Link>
    ),
  },
];

/**
 * The mode's request log, read-only, for every role: every request made with the brand's keys of
 * the mode, refused ones included, newest first, filtered by status class and method; the filters
 * and the page (`after`, the last entry seen) live in the address. A request id opens the request
 * with its bodies, as stored: secrets, tokens and keys redacted.
 */
export function LogsPage({ mode, requestId }: { mode: Mode; requestId: string | undefined }) {
  if (requestId) return <RequestDetail mode={mode} requestId={requestId} />;
  return <RequestList mode={mode} />;
}

function RequestList({ mode }: { mode: Mode }) {
  const [query, setQuery] = useQuery();
  const askedStatus = query.get("status") ?? "";
  const status = (CLASSES as readonly string[]).includes(askedStatus) ? (askedStatus as (typeof CLASSES)[number]) : "";
  const askedMethod = query.get("method") ?? "";
  const method = (METHODS as readonly string[]).includes(askedMethod) ? (askedMethod as (typeof METHODS)[number]) : "";
  const askedAfter = query.get("after") ?? "";
  const after = UUID.test(askedAfter) ? askedAfter : "";
  const log = useLoad(
    () =>
      api.GET("/modes/{mode}/requests", {
        params: {
          path: { mode },
          query: {
            limit: PAGE,
            ...(status ? { status } : {}),
            ...(method ? { method } : {}),
            ...(after ? { starting_after: after } : {}),
          },
        },
      }),
    [mode, status, method, after],
  );
  const rows = log.data?.requests;
  return (
    <>
      <h1>Logs ({mode})</h1>
      <p class="muted">
        Every request to the API made with this brand's {mode} keys, refused ones included, newest first. Secrets,
        tokens and keys in the bodies are stored redacted. Kept 14 days. Follow them as they happen with{" "}
        <code>live-stream-hosting logs tail</code>.
      </p>
      <Toolbar onRefresh={log.reload}>
        <FilterSelect
          label="Status"
          value={status}
          values={CLASSES}
          onChange={(next) => setQuery({ status: next, after: null })}
        />
        <FilterSelect
          label="Method"
          value={method}
          values={METHODS}
          onChange={(next) => setQuery({ method: next, after: null })}
        />
      </Toolbar>
      <LoadedTable
        loaded={log}
        what="the request log"
        empty={status || method ? "No requests match the filters." : `No requests made with ${mode} keys are kept.`}
        rows={rows}
        columns={COLUMNS(mode)}
        rowKey={(entry) => entry.id}
      />
      {log.data && (after || log.data.has_more) && (
        <nav class="pager" aria-label="Pages">
          <button type="button" class="secondary" disabled={!after} onClick={() => setQuery({ after: null })}>
            Newest
          </button>
          <button
            type="button"
            class="secondary"
            disabled={!log.data.has_more || !rows?.length}
            onClick={() => setQuery({ after: rows?.at(-1)?.id ?? null })}
          >
            Older
          </button>
        </nav>
      )}
    </>
  );
}

/** A body as stored: pretty-printed when it is whole JSON, as text otherwise (one cut short). */
function Body({ label, text, truncated }: { label: string; text: string | null; truncated: boolean }) {
  let shown = text;
  if (text !== null && !truncated) {
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not JSON: shown as sent.
    }
  }
  return (
    <section aria-label={label}>
      <h2>{label}</h2>
      {shown === null ? (
        <p class="muted">None.</p>
      ) : (
        <>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take keyboard focus (axe: scrollable-region-focusable) */}
          <pre class="payload" tabIndex={0}>
            {shown}
          </pre>
          {truncated && <p class="muted">Cut to its first 10,240 bytes.</p>}
        </>
      )}
    </section>
  );
}

function RequestDetail({ mode, requestId }: { mode: Mode; requestId: string }) {
  const detail = useLoad(
    () => api.GET("/modes/{mode}/requests/{request_id}", { params: { path: { mode, request_id: requestId } } }),
    [mode, requestId],
  );
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [requestId]);
  const data = detail.data;
  const entry = data?.request;
  return (
    <>
      <p>
        <Link href={`${modePath(mode, "logs")}${location.search}`}>← Logs</Link>
      </p>
      <h1 tabIndex={-1} ref={heading}>
        Request <code>{requestId}</code>
      </h1>
      <ErrorNote message={detail.error} />
      {!data && !detail.error && <Loading what="the request" />}
      {data && entry && (
        <>
          <dl class="fields">
            <dt>Time</dt>
            <dd>
              <Time iso={entry.created_at} />
            </dd>
            <dt>Request</dt>
            <dd>
              <code class="answer">
                {entry.method} {entry.path}
                {entry.query === null ? "" : `?${entry.query}`}
              </code>
            </dd>
            <dt>Answer</dt>
            <dd>
              <StatusBadge status={entry.status} /> {entry.error_code && <code>{entry.error_code}</code>} in{" "}
              {entry.duration_ms} ms
            </dd>
            <dt>Key</dt>
            <dd>
              {entry.key_name} {entry.key_hint && <code class="small">{entry.key_hint}</code>}
            </dd>
            <dt>Client address</dt>
            <dd>
              <code>{entry.client_address}</code>
            </dd>
            <dt>Idempotency-Key</dt>
            <dd>
              {entry.idempotency_key === null ? "—" : <code class="answer">{entry.idempotency_key}</code>}
              {entry.replayed && " (the answer was a replay)"}
            </dd>
          </dl>
          <Body label="Request body" text={data.request_body} truncated={data.request_body_truncated} />
          <Body label="Response body" text={data.response_body} truncated={data.response_body_truncated} />
        </>
      )}
    </>
  );
}
