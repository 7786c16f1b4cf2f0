import { useState } from "preact/hooks";
import { platformValues, streamStatusValues } from "../../../generated/api.ts";
import { api, type Mode, type Schemas } from "../api.ts";
import { ActionForm } from "../components/action-form.tsx";
import { CreatorPicker } from "../components/creator-picker.tsx";
import { FilterToolbar } from "../components/filter-toolbar.tsx";
import { Link } from "../components/link.tsx";
import { PagedTable } from "../components/loaded-table.tsx";
import { ReadOnlyNote } from "../components/notes.tsx";
import { SelectField } from "../components/select-field.tsx";
import { Time } from "../format.tsx";
import { useAction, usePagedLoad } from "../hooks.ts";
import { modePath, navigate, useQuery } from "../route.ts";
import { canChange, useSession } from "../session.ts";
import { StreamDetail } from "./stream-detail.tsx";

const PAGE = 20;

/** Streams of the mode with the API's filter and paging, a form to start one, or one stream's detail. */
export function StreamsPage({ mode, streamId }: { mode: Mode; streamId?: string }) {
  if (streamId) return <StreamDetail mode={mode} streamId={streamId} />;
  return <StreamList mode={mode} />;
}

type Stream = Schemas["StreamSummary"];

const COLUMNS = (mode: Mode) => [
  {
    header: "Product",
    cell: (stream: Stream) => (
      <Link href={modePath(mode, "streams", stream.id)}>{stream.product_name || stream.id}</Link>
    ),
  },
  { header: "Status", cell: (stream: Stream) => <span class={`badge ${stream.status ?? ""}`}>{stream.status}</span> },
  { header: "Platform", cell: (stream: Stream) => stream.platform },
  { header: "Source", cell: (stream: Stream) => stream.source },
  { header: "Viewers", cell: (stream: Stream) => stream.viewer_count ?? 0 },
  { header: "Created", cell: (stream: Stream) => <Time iso={stream.created_at} /> },
  { header: "Ended", cell: (stream: Stream) => <Time iso={stream.ended_at} /> },
];

function StreamList({ mode }: { mode: Mode }) {
  const { session } = useSession();
  // The filter and the page in the address (?status=&offset=): Back from a stream returns here.
  const [query, setQuery] = useQuery();
  const asked = query.get("status") ?? "";
  const status = (streamStatusValues as readonly string[]).includes(asked) ? (asked as Schemas["StreamStatus"]) : "";
  const setStatus = (next: Schemas["StreamStatus"] | "") => setQuery({ status: next, offset: null });
  const streams = usePagedLoad(
    (page) =>
      api.GET("/modes/{mode}/streams", {
        params: { path: { mode }, query: { ...page, ...(status ? { status } : {}) } },
      }),
    [mode, status],
    PAGE,
  );
  return (
    <>
      <h1>Streams ({mode})</h1>
      {canChange(session) ? <StartStream mode={mode} /> : <ReadOnlyNote role={session.member?.role ?? "viewer"} />}
      <h2>All streams</h2>
      <FilterToolbar
        label="Status"
        value={status}
        values={streamStatusValues}
        onChange={setStatus}
        onRefresh={streams.reload}
      />
      <PagedTable
        paged={streams}
        total={streams.data?.total}
        noun={{ one: "stream", other: "streams" }}
        what="streams"
        empty={`No streams${status ? ` with status ${status}` : ""}.`}
        rows={streams.data?.streams}
        columns={COLUMNS(mode)}
        rowKey={(stream) => stream.id ?? ""}
      />
    </>
  );
}
function StartStream({ mode }: { mode: Mode }) {
  const [creatorId, setCreatorId] = useState("");
  const [product, setProduct] = useState("");
  const [platform, setPlatform] = useState<Schemas["Platform"]>(platformValues[0]!);
  const [duration, setDuration] = useState(mode === "live" ? "60" : "");
  const [script, setScript] = useState("");
  const start = useAction(
    () =>
      api.POST("/modes/{mode}/streams", {
        params: { path: { mode } },
        body: {
          creator_id: creatorId,
          product_name: product,
          platform,
          ...(duration ? { duration_minutes: Number(duration) } : {}),
          ...(script ? { script } : {}),
        },
      }),
    (stream: Schemas["StreamCreated"]) => navigate(modePath(mode, "streams", stream.stream_id)),
  );
  return (
    <details class="panel">
      <summary>Start a stream</summary>
      <ActionForm action={start} submitLabel="Start stream">
        <p class="muted">
          {mode === "test"
            ? "A test stream is simulated: it goes live at once and costs nothing."
            : "A live stream dispatches the host and holds its projected cost from your credits."}
        </p>
        <CreatorPicker value={creatorId} onChange={setCreatorId} />
        <label>
          Product or game
          <input required maxLength={200} value={product} onInput={(e) => setProduct(e.currentTarget.value)} />
        </label>
        <SelectField label="Platform" value={platform} values={platformValues} onChange={setPlatform} />
        <label>
          Duration in minutes{mode === "test" ? " (optional)" : ""}
          <input
            type="number"
            min={1}
            max={480}
            required={mode === "live"}
            value={duration}
            onInput={(e) => setDuration(e.currentTarget.value)}
          />
        </label>
        <label>
          Script (optional)
          <textarea rows={4} maxLength={50_000} value={script} onInput={(e) => setScript(e.currentTarget.value)} />
        </label>
      </ActionForm>
    </details>
  );
}
