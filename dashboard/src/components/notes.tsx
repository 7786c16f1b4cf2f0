import type { ComponentChildren } from "preact";

/** An error said out loud by screen readers as it appears. */
export function ErrorNote({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p class="note error" role="alert">
      {message}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return <p class="note">{children}</p>;
}

/** Shown where a viewer sees a form: the server refuses their changes anyway. */
export function ReadOnlyNote({ role }: { role: string }) {
  return <p class="note">Your role ({role}) can read this page but not change it.</p>;
}
