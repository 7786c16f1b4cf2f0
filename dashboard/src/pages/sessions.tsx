import { api, type Schemas } from "../api.ts";
import { LoadedTable } from "../components/loaded-table.tsx";
import { RemoveRowButton } from "../components/remove-row-button.tsx";
import { countOf, formatTime, Time } from "../format.tsx";
import { useAction, useLoad } from "../hooks.ts";
import { useSession } from "../session.ts";

type Session = Schemas["DashboardSessionInfo"];

const COLUMNS = [
  {
    header: "Device",
    cell: (session: Session) => (
      <>
        <span title={session.user_agent ?? undefined}>{session.device}</span>
        {session.current && <span class="badge current">This session</span>}
      </>
    ),
  },
  {
    header: "Address",
    cell: (session: Session) => (session.address ? <code class="nowrap">{session.address}</code> : "—"),
  },
  { header: "Signed in", cell: (session: Session) => <Time iso={session.created_at} /> },
  { header: "Last seen", cell: (session: Session) => <Time iso={session.last_seen_at} /> },
];

/**
 * Where the member is signed in: each live session's device, address and times, this one marked,
 * each revocable (this one too: that signs out, as Sign out does).
 */
export function SessionsPanel() {
  const { update } = useSession();
  const list = useLoad(() => api.GET("/account/sessions"), []);
  const revoke = useAction(
    (id: string) => api.DELETE("/account/sessions/{session_id}", { params: { path: { session_id: id } } }),
    (answer: Schemas["DashboardSessionRevoked"]) => (answer.current ? update() : list.reload()),
  );
  const data = list.data;
  return (
    <section class="panel" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <p>
        Where your account is signed in. Revoke a session you do not recognise, then change your password; revoking this
        one signs you out here.
      </p>
      <LoadedTable
        loaded={list}
        what="your sessions"
        empty="No sessions."
        rows={data?.sessions}
        columns={COLUMNS}
        rowKey={(session) => session.session_id}
        actionsHeader="Revoke"
        actionError={revoke.error}
        actions={(session) => (
          <RemoveRowButton
            verb="Revoke"
            row={`the session of ${session.device}, signed in ${formatTime(session.created_at)}`}
            kind="session"
            question={
              session.current
                ? "Revoke this session? You are signed out here at once."
                : `Revoke the session of ${session.device}${session.address ? ` at ${session.address}` : ""}? Its next request is refused and it must sign in again.`
            }
            action={revoke}
            id={session.session_id}
          />
        )}
      />
      {data && (
        <p class="muted" data-testid="sessions-total">
          {countOf(data.total, "active session")}
          {data.total > data.sessions.length ? `; the ${data.sessions.length} last seen are listed.` : "."}
        </p>
      )}
    </section>
  );
}
