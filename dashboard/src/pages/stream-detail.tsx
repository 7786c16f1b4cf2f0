import { api, type Mode } from "../api.ts";
import { ConfirmButton } from "../components/confirm.tsx";
import { Link } from "../components/link.tsx";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { Time } from "../format.tsx";
import { useAction, useLoad } from "../hooks.ts";
import { modePath } from "../route.ts";
import { canChange, useSession } from "../session.ts";
import { StreamTimeline } from "./stream-timeline.tsx";

/** One stream: its fields, ending it while it is preparing or live, its billing and timeline. */
export function StreamDetail({ mode, streamId }: { mode: Mode; streamId: string }) {
  const { session } = useSession();
  const stream = useLoad(
    () => api.GET("/modes/{mode}/streams/{id}", { params: { path: { mode, id: streamId } } }),
    [mode, streamId],
  );
  const end = useAction(
    () => api.DELETE("/modes/{mode}/streams/{id}", { params: { path: { mode, id: streamId } } }),
    () => stream.reload(),
  );
  const data = stream.data;
  const active = data?.status === "live" || data?.status === "preparing";
  return (
    <>
      <p>
        <Link href={modePath(mode, "streams")}>← Streams</Link>
      </p>
      <h1>{data?.product_name ?? "Stream"}</h1>
      <div class="toolbar">
        <button type="button" class="secondary" onClick={stream.reload} disabled={stream.loading}>
          Refresh
        </button>
      </div>
      <ErrorNote message={stream.error ?? end.error} />
      {!data && !stream.error && <Loading what="the stream" />}
      {data && (
        <>
          <dl class="fields">
            <dt>Stream id</dt>
            <dd>
              <code>{data.stream_id}</code>
            </dd>
            <dt>Status</dt>
            <dd>
              <span class={`badge ${data.status}`}>{data.status}</span>
            </dd>
            <dt>Creator</dt>
            <dd>{data.creator_id ?? "—"}</dd>
            <dt>Platform</dt>
            <dd>{data.platform}</dd>
            <dt>Vertical</dt>
            <dd>{data.vertical}</dd>
            <dt>Viewers</dt>
            <dd>{data.viewer_count}</dd>
            <dt>Room</dt>
            <dd>
              <code>{data.room_name}</code>
            </dd>
            <dt>Started</dt>
            <dd>
              <Time iso={data.started_at} />
            </dd>
            <dt>Ended</dt>
            <dd>
              <Time iso={data.ended_at} />
            </dd>
          </dl>
          {active && canChange(session) && (
            <ConfirmButton
              label="End stream"
              question="End this stream now? Viewers are disconnected and the stream cannot be restarted."
              confirmLabel="End stream"
              disabled={end.busy}
              onConfirm={() => end.run()}
            />
          )}
          <StreamTimeline mode={mode} streamId={streamId} round={data} />
        </>
      )}
    </>
  );
}
