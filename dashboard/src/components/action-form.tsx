import type { ComponentChildren } from "preact";
import { useId, useState } from "preact/hooks";
import type { Action } from "../hooks.ts";
import { ErrorNote } from "./notes.tsx";

/**
 * A form that sends one change to the API: its fields, then the refusal or failure in words,
 * then the submit button (off while sending, or while `ready` is false). With a `title` it is a
 * panel labelled by its heading. `check` finds a problem before anything is sent (two passwords
 * that differ): it is shown like the server's refusals, on submit, where a keyboard user is.
 */
export function ActionForm(props: {
  action: Action<[]>;
  submitLabel: string;
  title?: ComponentChildren;
  ready?: boolean;
  danger?: boolean;
  check?(): string | null;
  onSubmit?(): void;
  children: ComponentChildren;
}) {
  const titleId = useId();
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    props.onSubmit?.();
    const found = props.check?.() ?? null;
    setProblem(found);
    if (!found) void props.action.run();
  };
  return (
    <form
      class={props.title === undefined ? undefined : "panel"}
      aria-labelledby={props.title === undefined ? undefined : titleId}
      onSubmit={submit}
    >
      {props.title !== undefined && <h2 id={titleId}>{props.title}</h2>}
      {props.children}
      <ErrorNote message={problem ?? props.action.error} />
      <button
        type="submit"
        class={props.danger ? "danger" : undefined}
        disabled={props.action.busy || props.ready === false}
      >
        {props.submitLabel}
      </button>
    </form>
  );
}
