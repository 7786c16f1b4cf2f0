import { Fragment } from "preact";
import { dashboardAuditActionValues } from "../../../generated/api.ts";
import { api, type Schemas } from "../api.ts";
import { FilterSelect, Toolbar } from "../components/filter-toolbar.tsx";
import { PagedTable } from "../components/loaded-table.tsx";
import { Time } from "../format.tsx";
import { useLoad, usePagedLoad } from "../hooks.ts";
import { useQuery } from "../route.ts";

type Entry = Schemas["DashboardAuditEntry"];
type Action = Schemas["DashboardAuditAction"];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An action's name, which may break after its dots and underscores (`session.signed_in_with_recovery_code`). */
function ActionName({ action }: { action: string }) {
  const parts = action.split(/(?<=[._])/);
  return (
    <code>
      {parts.map((part, index) => (
        // The parts of one name, in order: their places are their keys.
        <Fragment key={index}>
          {index > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </code>
  );
}

const COLUMNS = [
  { header: "When", cell: (entry: Entry) => <Time iso={entry.at} /> },
  { header: "Who", cell: (entry: Entry) => entry.actor },
  // Kept for every change since addresses were recorded; older entries have none.
  { header: "Address", cell: (entry: Entry) => (entry.address ? <code class="nowrap">{entry.address}</code> : "—") },
  {
    header: "Action",
    cell: (entry: Entry) => (
      <>
        <ActionName action={entry.action} />
        {entry.mode && <span class={`badge mode ${entry.mode}`}>{entry.mode}</span>}
      </>
    ),
  },
  {
    header: "Target",
    // What it was called, and the start of its id (the whole id is its tooltip).
    cell: (entry: Entry) =>
      entry.target_id === null ? (
        "—"
      ) : (
        <>
          {entry.target_name && <span class="target-name">{entry.target_name}</span>}
          <code class="small" title={entry.target_id}>
            {entry.target_id.length > 12 ? `${entry.target_id.slice(0, 8)}…` : entry.target_id}
          </code>
        </>
      ),
  },
  { header: "Detail", cell: (entry: Entry) => entry.detail },
];

/**
 * Every change made to the brand, newest first (owners only; the server refuses others), filtered
 * by action and by the member who made it; the filters and the page are in the address
 * (`?action=&member=&offset=`).
 */
export function AuditLogPage() {
  const [query, setQuery] = useQuery();
  const askedAction = query.get("action") ?? "";
  const action = (dashboardAuditActionValues as readonly string[]).includes(askedAction) ? (askedAction as Action) : "";
  const askedMember = query.get("member") ?? "";
  const member = UUID.test(askedMember) ? askedMember.toLowerCase() : "";
  const people = useLoad(() => api.GET("/members"), []);
  const log = usePagedLoad(
    (page) =>
      api.GET("/audit-log", {
        params: { query: { ...page, ...(action ? { action } : {}), ...(member ? { member_id: member } : {}) } },
      }),
    [action, member],
    50,
  );
  // The brand's members by id; one filtered on who has since been removed is named by their entries.
  const names = new Map((people.data?.members ?? []).map((one) => [one.member_id, one.email]));
  if (member && !names.has(member)) {
    const actor = log.data?.entries.find((entry) => entry.member_id === member)?.actor;
    names.set(member, actor ? `${actor} (removed)` : "A removed member");
  }
  return (
    <>
      <h1>Audit log</h1>
      <Toolbar onRefresh={log.reload}>
        <FilterSelect
          label="Action"
          value={action}
          values={dashboardAuditActionValues}
          onChange={(next) => setQuery({ action: next, offset: null })}
        />
        <FilterSelect
          label="Member"
          value={member}
          values={[...names.keys()]}
          optionLabel={(id) => names.get(id) ?? id}
          onChange={(next) => setQuery({ member: next, offset: null })}
        />
      </Toolbar>
      <PagedTable
        paged={log}
        total={log.data?.total}
        noun={{ one: "entry", other: "entries" }}
        what="the audit log"
        empty={action || member ? "No entries match the filters." : "No entries."}
        rows={log.data?.entries}
        columns={COLUMNS}
        rowKey={(entry) => entry.entry_id}
      />
    </>
  );
}
