import { useState } from "preact/hooks";
import { platformValues, streamStatusValues } from "../../../generated/api.ts";
import { api, type Mode, type Schemas } from "../api.ts";
import { Link } from "../components/link.tsx";
import { ErrorNote, Loading, ReadOnlyNote } from "../components/notes.tsx";
import { Pager } from "../components/pager.tsx";
import { formatTime } from "../format.ts";
import { useAction, useLoad } from "../hooks.ts";
import { modePath, navigate } from "../route.ts";
import { canChange, useSession } from "../session.ts";
import { StreamDetail } from "./stream-detail.tsx";

const PAGE = 20;

/** Streams of the mode with the API's filter and paging, a form to start one, or one stream's detail. */
export function StreamsPage({ mode, streamId }: { mode: Mode; streamId?: string }) {
  if (streamId) return <StreamDetail mode={mode} streamId={streamId} />;
  return <StreamList mode={mode} />;
}

function StreamList({ mode }: { mode: Mode }) {
  const { session } = useSession();
  const [status, setStatus] = useState("");
  const [offset, setOffset] = useState(0);
  const streams = useLoad(
    () =>
      api.GET("/modes/{mode}/streams", {
        params: { path: { mode }, query: { limit: PAGE, offset, ...(status ? { status } : {}) } },
      }),
    [mode, status, offset],
  );
  const data = streams.data;
  return (
    <>
      <h1>Streams ({mode})</h1>
      {canChange(session) ? <StartStream mode={mode} /> : <ReadOnlyNote role={session.member?.role ?? "viewer"} />}
      <h2>All streams</h2>
      <div class="toolbar">
        <div class="field">
          <label for="field-status">Status</label>
          <select
            id="field-status"
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value);
              setOffset(0);
            }}
          >
            <option value="">All</option>
            {streamStatusValues.map((value) => (
              <option value={value} key={value}>
                {value}
              </option>
            ))}
          </select>
        </div>
        <button type="button" class="secondary" onClick={streams.reload}>
          Refresh
        </button>
      </div>
      <ErrorNote message={streams.error} />
      {!data && !streams.error && <Loading what="streams" />}
      {data && data.streams.length === 0 && <p>No streams{status ? ` with status ${status}` : ""}.</p>}
      {data && data.streams.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Product</th>
                <th scope="col">Status</th>
                <th scope="col">Platform</th>
                <th scope="col">Source</th>
                <th scope="col">Viewers</th>
                <th scope="col">Created</th>
                <th scope="col">Ended</th>
              </tr>
            </thead>
            <tbody>
              {data.streams.map((stream) => (
                <tr key={stream.id}>
                  <td>
                    <Link href={modePath(mode, "streams", stream.id)}>{stream.product_name || stream.id}</Link>
                  </td>
                  <td>
                    <span class={`badge ${stream.status ?? ""}`}>{stream.status}</span>
                  </td>
                  <td>{stream.platform}</td>
                  <td>{stream.source}</td>
                  <td>{stream.viewer_count ?? 0}</td>
                  <td>{formatTime(stream.created_at)}</td>
                  <td>{formatTime(stream.ended_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && (
        <Pager
          offset={data.offset}
          limit={data.limit}
          shown={data.streams.length}
          total={data.total}
          onOffset={setOffset}
        />
      )}
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
          creator_id: creatorId.trim(),
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
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void start.run();
        }}
      >
        <p class="muted">
          {mode === "test"
            ? "A test stream is simulated: it goes live at once and costs nothing."
            : "A live stream dispatches the host and holds its projected cost from your credits."}
        </p>
        <label>
          Creator id
          <input
            required
            maxLength={64}
            pattern="avt_.+"
            aria-describedby="creator-hint"
            value={creatorId}
            onInput={(e) => setCreatorId(e.currentTarget.value)}
          />
        </label>
        <p class="hint" id="creator-hint">
          The creator's <code>avt_</code> id, as listed by GET /api/v1/creators.
        </p>
        <label>
          Product or game
          <input required maxLength={200} value={product} onInput={(e) => setProduct(e.currentTarget.value)} />
        </label>
        <div class="field">
          <label for="field-platform">Platform</label>
          <select
            id="field-platform"
            value={platform}
            onChange={(e) => setPlatform(e.currentTarget.value as Schemas["Platform"])}
          >
            {platformValues.map((value) => (
              <option value={value} key={value}>
                {value}
              </option>
            ))}
          </select>
        </div>
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
        <ErrorNote message={start.error} />
        <button type="submit" disabled={start.busy}>
          Start stream
        </button>
      </form>
    </details>
  );
}
