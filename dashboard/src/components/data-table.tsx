import type { ComponentChildren } from "preact";

export interface Column<T> {
  header: string;
  cell(row: T): ComponentChildren;
}

/**
 * A table of rows, one column per `columns` entry; on a phone each row is stacked, its cells named
 * by their column (`data-label`, styles.css), so nothing scrolls sideways. With
 * `actions`, a last column of each row's buttons and links, its header there for screen readers.
 */
export function DataTable<T>(props: {
  columns: Column<T>[];
  rows: readonly T[];
  rowKey(row: T): string | number;
  actions?(row: T): ComponentChildren;
  actionsHeader?: string;
}) {
  const { columns, actions } = props;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column.header}>
                {column.header}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span class="visually-hidden">{props.actionsHeader ?? "Actions"}</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {columns.map((column) => (
                <td key={column.header} data-label={column.header}>
                  {column.cell(row)}
                </td>
              ))}
              {actions && (
                <td>
                  <div class="row-actions">{actions(row)}</div>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
