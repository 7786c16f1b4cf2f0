import { countOf, formatNumber } from "../format.tsx";

/** What a list counts, for its total: "1 delivery", "45 deliveries". */
export interface Noun {
  one: string;
  other: string;
}

/**
 * Previous / next over an offset-paged list, and where the page lies in it: "21–40 of 45
 * streams" when the API gives the total (every paged list of the dashboard's does).
 */
export function Pager(props: {
  offset: number;
  limit: number;
  shown: number;
  total?: number;
  noun?: Noun;
  onOffset(offset: number): void;
}) {
  const { offset, limit, shown, total, noun } = props;
  const hasNext = total === undefined ? shown === limit : offset + shown < total;
  const range = shown === 0 ? "none" : `${formatNumber(offset + 1)}–${formatNumber(offset + shown)}`;
  const of = total === undefined ? "" : ` of ${noun ? countOf(total, noun.one, noun.other) : formatNumber(total)}`;
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
      <span data-testid="pager-range">
        {range}
        {of}
      </span>
      <button type="button" class="secondary" disabled={!hasNext} onClick={() => props.onOffset(offset + limit)}>
        Next
      </button>
    </nav>
  );
}
