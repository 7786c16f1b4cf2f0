/**
 * A timestamp column as a domain record holds it: a Date of its own (a timestamp inside
 * `to_jsonb(...)`, how keys.ts reads a key, is ISO text).
 */
export function dateOf(value: Date | string): Date {
  return new Date(value);
}

/** `dateOf` for a nullable column. */
export function dateOrNull(value: Date | string | null): Date | null {
  return value === null ? null : new Date(value);
}
