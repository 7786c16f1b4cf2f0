import { api, type Schemas } from "../api.ts";
import { PagedTable } from "../components/loaded-table.tsx";
import { Time } from "../format.tsx";
import { usePagedLoad } from "../hooks.ts";

type Entry = Schemas["DashboardAuditEntry"];

const COLUMNS = [
  { header: "When", cell: (entry: Entry) => <Time iso={entry.at} /> },
  { header: "Who", cell: (entry: Entry) => entry.actor },
  { header: "Action", cell: (entry: Entry) => <code>{entry.action}</code> },
  { header: "Mode", cell: (entry: Entry) => entry.mode ?? "—" },
  { header: "Target", cell: (entry: Entry) => (entry.target_id ? <code class="small">{entry.target_id}</code> : "—") },
  { header: "Detail", cell: (entry: Entry) => entry.detail },
];

/** Every change made to the brand, newest first (owners only; the server refuses others). */
export function AuditLogPage() {
  const log = usePagedLoad((page) => api.GET("/audit-log", { params: { query: page } }), [], 50);
  return (
    <>
      <h1>Audit log</h1>
      <PagedTable
        paged={log}
        what="the audit log"
        empty="No entries."
        rows={log.data?.entries}
        columns={COLUMNS}
        rowKey={(entry) => entry.entry_id}
      />
    </>
  );
}
