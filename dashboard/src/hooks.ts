import { useCallback, useEffect, useState } from "preact/hooks";
import { messageOf } from "./api.ts";

type Answer<T> = { data?: T; error?: unknown };

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/** Reads from the API when `deps` change; the error is a message ready to show. */
export function useLoad<T>(read: () => Promise<Answer<T>>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    read().then(
      (answer) =>
        current &&
        setState({
          data: answer.data,
          error: answer.error === undefined ? null : messageOf(answer.error),
          loading: false,
        }),
      (failure: unknown) => current && setState({ data: undefined, error: messageOf(failure), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { ...state, reload };
}

export interface Action<A extends unknown[]> {
  run(...args: A): Promise<void>;
  busy: boolean;
  error: string | null;
  clearError(): void;
}

/**
 * A change sent to the API: `send` answers with the API's result; `done` runs on success.
 * Failures become a message, never an exception; `refused` may take a refusal as a next step
 * instead (it answers true), as sign-in does with `totp_required`.
 */
export function useAction<A extends unknown[], T>(
  send: (...args: A) => Promise<Answer<T>>,
  done: (data: T) => void | Promise<void>,
  refused?: (error: unknown) => boolean,
): Action<A> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      const answer = await send(...args);
      if (answer.error === undefined) await done(answer.data as T);
      else if (!refused?.(answer.error)) setError(messageOf(answer.error));
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, clearError: () => setError(null) };
}

export interface Page {
  limit: number;
  offset: number;
}

export interface PagedLoad<T> extends Loaded<T>, Page {
  setOffset(offset: number): void;
}

/**
 * One page of an offset-paged list. A change of `deps` (a filter, the mode) starts again at the
 * first page, in the same render, so no request is made for a page of the old filter.
 */
export function usePagedLoad<T>(
  read: (page: Page) => Promise<Answer<T>>,
  deps: unknown[],
  limit: number,
): PagedLoad<T> {
  const [paged, setPaged] = useState({ deps, offset: 0 });
  const sameDeps = paged.deps.length === deps.length && paged.deps.every((value, i) => Object.is(value, deps[i]));
  const offset = sameDeps ? paged.offset : 0;
  const loaded = useLoad(() => read({ limit, offset }), [...deps, offset]);
  return { ...loaded, limit, offset, setOffset: (next) => setPaged({ deps, offset: next }) };
}
