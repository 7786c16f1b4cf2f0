export interface Page<T> {
  items: T[];
  /** How many items match the filter, as reported with this page. */
  total: number;
}

export interface PaginateOptions<T = { id?: string }> {
  /** Page size asked for; the API caps it at 100. */
  limit?: number | undefined;
  /** Where to start. */
  offset?: number | undefined;
  /** An item's unique key, to skip one seen on an earlier page; default its `id`. */
  keyOf?: ((item: T) => string | undefined) | undefined;
}

/**
 * Yields every item of a limit/offset listing, one page at a time, until a page comes back
 * empty or the reported total is reached. The offset advances by what was received (not by
 * `limit`), so a server that caps the page size leaves no gaps; items already yielded are
 * skipped by `id` (or `keyOf`), so items inserted at the head while paging cause no duplicates.
 */
export async function* paginate<T>(
  fetchPage: (page: { limit: number; offset: number }) => Promise<Page<T>>,
  { limit = 100, offset = 0, keyOf = (item) => (item as { id?: string }).id }: PaginateOptions<T> = {},
): AsyncGenerator<T, void, undefined> {
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError(`limit must be a whole number ≥ 1, got ${limit}.`);
  if (!Number.isInteger(offset) || offset < 0) throw new TypeError(`offset must be a whole number ≥ 0, got ${offset}.`);
  const seen = new Set<string>();
  for (;;) {
    const { items, total } = await fetchPage({ limit, offset });
    for (const item of items) {
      const key = keyOf(item);
      if (key !== undefined) {
        if (seen.has(key)) continue;
        seen.add(key);
      }
      yield item;
    }
    offset += items.length;
    if (items.length === 0 || offset >= total) return;
  }
}
