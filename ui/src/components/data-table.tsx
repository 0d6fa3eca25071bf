/**
 * The one table of the UI: a scrolling wrapper, a header row from the columns, one row per item
 * (with test/drag attributes from `rowProps`), a full-width row when there is nothing to show, and
 * an optional full-width detail row under an item. Screens describe columns; the markup lives here.
 */
import { Fragment, type ComponentChildren, type JSX } from 'preact';

export interface Column<T> {
  /** Header text; '' for an actions column. */
  title: ComponentChildren;
  cell: (row: T, index: number) => ComponentChildren;
  /** Class of the column's cells, e.g. `actions`. */
  class?: string;
}

type RowProps = JSX.HTMLAttributes<HTMLTableRowElement> & { [data: `data-${string}`]: string | number | boolean | undefined };

interface Props<T> {
  rows: readonly T[];
  columns: Column<T>[];
  rowKey: (row: T) => string;
  /** Extra attributes of a row's <tr>: `data-*` hooks, a class, drag handlers. */
  rowProps?: (row: T, index: number) => RowProps;
  /** Shown in one full-width row when `rows` is empty; nothing when absent. */
  empty?: ComponentChildren;
  /** A full-width row under an item (expanded details), or null for none. */
  detail?: (row: T) => ComponentChildren;
  id?: string;
  /** Leave out the header row (a list whose cells say what they are). */
  headless?: boolean;
}

export function DataTable<T>({ rows, columns, rowKey, rowProps, empty, detail, id, headless }: Props<T>) {
  return (
    <div class="table-wrap">
      <table id={id}>
        {!headless && (
          <thead>
            <tr>
              {columns.map((column, index) => (
                <th key={index}>{column.title}</th>
              ))}
            </tr>
          </thead>
        )}
        <tbody>
          {rows.length === 0 && empty !== undefined && (
            <tr>
              <td colSpan={columns.length} class="muted">
                {empty}
              </td>
            </tr>
          )}
          {rows.map((row, index) => {
            const more = detail?.(row);
            return (
              <Fragment key={rowKey(row)}>
                <tr {...rowProps?.(row, index)}>
                  {columns.map((column, col) => (
                    <td key={col} class={column.class}>
                      {column.cell(row, index)}
                    </td>
                  ))}
                </tr>
                {more != null && more !== false && (
                  <tr>
                    <td colSpan={columns.length}>{more}</td>
                  </tr>
                )}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
