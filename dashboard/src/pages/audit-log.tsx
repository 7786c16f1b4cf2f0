import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { Pager } from "../components/pager.tsx";
import { formatTime } from "../format.ts";
import { useLoad } from "../hooks.ts";

const PAGE = 50;

/** Every change made to the brand, newest first (owners only; the server refuses others). */
export function AuditLogPage() {
  const [offset, setOffset] = useState(0);
  const log = useLoad(() => api.GET("/audit-log", { params: { query: { limit: PAGE, offset } } }), [offset]);
  const entries = log.data?.entries ?? [];
  return (
    <>
      <h1>Audit log</h1>
      <ErrorNote message={log.error} />
      {!log.data && !log.error && <Loading what="the audit log" />}
      {log.data && entries.length === 0 && <p>No entries.</p>}
      {entries.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Mode</th>
                <th scope="col">Target</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <tr key={entry.entry_id}>
                  <td>{formatTime(entry.at)}</td>
                  <td>{entry.actor}</td>
                  <td>
                    <code>{entry.action}</code>
                  </td>
                  <td>{entry.mode ?? "—"}</td>
                  <td>{entry.target_id ? <code class="small">{entry.target_id}</code> : "—"}</td>
                  <td>{entry.detail}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {log.data && <Pager offset={offset} limit={PAGE} shown={entries.length} onOffset={setOffset} />}
    </>
  );
}
