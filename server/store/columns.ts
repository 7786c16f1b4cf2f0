/**
 * A timestamp column as a domain record holds it: a Date of its own. Rows of the embedded
 * database's read cache are shared by every caller of the same read, so their Dates are copied,
 * never handed on; and a timestamp inside `to_jsonb(...)` (how keys.ts reads a key) is ISO text.
 */
export function dateOf(value: Date | string): Date {
  return new Date(value);
}

/** `dateOf` for a nullable column. */
export function dateOrNull(value: Date | string | null): Date | null {
  return value === null ? null : new Date(value);
}

/**
 * `build`, made once per row object: the embedded database answers a repeated read with the same
 * row objects until a write that may change them (store/database.ts), so the records of a busy
 * read are built once, not on every request. Rows read fresh (PostgreSQL, or after a write) get
 * records of their own. Callers treat the records as read-only.
 */
export function oncePerRow<Row extends object, Built>(build: (row: Row) => Built): (row: Row) => Built {
  const built = new WeakMap<Row, Built>();
  return (row) => {
    let record = built.get(row);
    if (record === undefined) {
      record = build(row);
      built.set(row, record);
    }
    return record;
  };
}
