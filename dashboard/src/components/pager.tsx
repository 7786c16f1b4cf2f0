/** Previous / next over an offset-paged list; `total` when the API gives it. */
export function Pager(props: {
  offset: number;
  limit: number;
  shown: number;
  total?: number;
  onOffset(offset: number): void;
}) {
  const { offset, limit, shown, total } = props;
  const hasNext = total === undefined ? shown === limit : offset + shown < total;
  const range = shown === 0 ? "none" : `${offset + 1}–${offset + shown}`;
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        class="secondary"
        disabled={offset === 0}
        onClick={() => props.onOffset(Math.max(0, offset - limit))}
      >
        Previous
      </button>
      <span>
        {range}
        {total === undefined ? "" : ` of ${total}`}
      </span>
      <button type="button" class="secondary" disabled={!hasNext} onClick={() => props.onOffset(offset + limit)}>
        Next
      </button>
    </nav>
  );
}
