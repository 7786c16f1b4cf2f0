import { useRef } from "preact/hooks";

/**
 * A button that asks first, in a modal <dialog> (focus moves into it and returns after; Escape
 * cancels).
 */
/** `label` is the visible text; `name`, which must contain it, tells apart the buttons of a table's rows. */
export function ConfirmButton(props: {
  label: string;
  name?: string;
  question: string;
  confirmLabel: string;
  disabled?: boolean;
  onConfirm(): void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const close = (confirmed: boolean) => {
    dialog.current?.close();
    if (confirmed) props.onConfirm();
  };
  return (
    <>
      <button
        type="button"
        class="danger"
        aria-label={props.name}
        disabled={props.disabled}
        onClick={() => dialog.current?.showModal()}
      >
        {props.label}
      </button>
      <dialog ref={dialog} aria-label={props.question}>
        <p>{props.question}</p>
        <div class="actions">
          <button type="button" class="secondary" onClick={() => close(false)} autofocus>
            Cancel
          </button>
          <button type="button" class="danger" onClick={() => close(true)}>
            {props.confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
