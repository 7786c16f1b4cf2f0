import { useCallback, useEffect, useState } from "preact/hooks";
import { messageOf } from "./api.ts";
import { useQuery } from "./route.ts";

type Answer<T> = { data?: T; error?: unknown };

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/** Reads from the API when `deps` change; the error is a message ready to show. */
export function useLoad<T>(read: () => Promise<Answer<T>>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean; deps?: string }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const [round, setRound] = useState(0);
  const depsKey = JSON.stringify(deps);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    read().then(
      (answer) =>
        current &&
        setState((previous) => ({
          data: answer.error === undefined || previous.deps !== depsKey ? answer.data : previous.data,
          error: answer.error === undefined ? null : messageOf(answer.error),
          loading: false,
          deps: depsKey,
        })),
      // A failed read (the server or the network down) keeps what was shown, with the error and a
      // retry above it; only a change of what is read (another mode, filter, page) drops it.
      (failure: unknown) =>
        current &&
        setState((previous) => ({
          data: previous.deps === depsKey ? previous.data : undefined,
          error: messageOf(failure),
          loading: false,
          deps: depsKey,
        })),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
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
 * One page of an offset-paged list, its offset in the address (`?offset=`, route.ts `useQuery`).
 * The page's filters live there too and are changed with the offset cleared, in one step, so no
 * request is made for a page of the old filter.
 */
export function usePagedLoad<T>(
  read: (page: Page) => Promise<Answer<T>>,
  deps: unknown[],
  limit: number,
): PagedLoad<T> {
  const [query, setQuery] = useQuery();
  const asked = Number(query.get("offset") ?? 0);
  const offset = Number.isSafeInteger(asked) && asked > 0 ? asked - (asked % limit) : 0;
  const loaded = useLoad(() => read({ limit, offset }), [...deps, offset]);
  return { ...loaded, limit, offset, setOffset: (next) => setQuery({ offset: next }) };
}
