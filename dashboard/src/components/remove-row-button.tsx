import type { Action } from "../hooks.ts";
import { ConfirmButton } from "./confirm.tsx";

/**
 * A row's Revoke / Delete / Remove button, which asks first. Its name says which row ("Revoke
 * ci key"); the dialog's button says what goes ("Revoke key"). `action` runs with the row's id,
 * and every row's button waits while one is being sent.
 */
export function RemoveRowButton(props: {
  verb: "Revoke" | "Delete" | "Remove";
  /** What the row is, after the verb in the button's name. */
  row: string;
  /** The kind of thing, after the verb in the dialog's button. */
  kind: string;
  question: string;
  action: Action<[string]>;
  id: string;
}) {
  return (
    <ConfirmButton
      label={props.verb}
      name={`${props.verb} ${props.row}`}
      question={props.question}
      confirmLabel={`${props.verb} ${props.kind}`}
      disabled={props.action.busy}
      onConfirm={() => props.action.run(props.id)}
    />
  );
}
