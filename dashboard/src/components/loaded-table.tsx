import type { ComponentChildren } from "preact";
import type { Loaded, PagedLoad } from "../hooks.ts";
import { type Column, DataTable } from "./data-table.tsx";
import { ErrorNote, Loading } from "./notes.tsx";
import { type Noun, Pager } from "./pager.tsx";

interface TableProps<T> {
  /** What is loading, for "Loading …". */
  what: string;
  /** Said in place of an empty table. */
  empty: ComponentChildren;
  rows: readonly T[] | undefined;
  columns: Column<T>[];
  rowKey(row: T): string | number;
  actions?(row: T): ComponentChildren;
  actionsHeader?: string;
  /** A failed change made from the rows (a revocation): shown where the list's own error is. */
  actionError?: string | null;
}

/** A list read from the API as a table: its error, "Loading …", an empty note, or its rows. */
export function LoadedTable<T>({ loaded, ...props }: TableProps<T> & { loaded: Loaded<unknown> }) {
  const { rows } = props;
  return (
    <>
      <ErrorNote message={loaded.error ?? props.actionError} />
      {loaded.error && (
        <button type="button" class="secondary" onClick={loaded.reload} disabled={loaded.loading}>
          Try again
        </button>
      )}
      {!loaded.data && !loaded.error && <Loading what={props.what} />}
      {loaded.data !== undefined && rows?.length === 0 && <p>{props.empty}</p>}
      {rows && rows.length > 0 && (
        <DataTable
          columns={props.columns}
          rows={rows}
          rowKey={props.rowKey}
          actions={props.actions}
          actionsHeader={props.actionsHeader}
        />
      )}
    </>
  );
}

/** A LoadedTable of one page of an offset-paged list, with Previous / Next and the list's total under it. */
export function PagedTable<T>({
  paged,
  total,
  noun,
  ...props
}: TableProps<T> & { paged: PagedLoad<unknown>; total: number | undefined; noun: Noun }) {
  return (
    <>
      <LoadedTable loaded={paged} {...props} />
      {paged.data !== undefined && (
        <Pager
          offset={paged.offset}
          limit={paged.limit}
          shown={props.rows?.length ?? 0}
          total={total}
          noun={noun}
          onOffset={paged.setOffset}
        />
      )}
    </>
  );
}
