import { passwordMaxLength } from "../../../generated/limits.ts";
import { useEffect, useId, useRef, useState } from "preact/hooks";

/**
 * A password input with a Show/Hide button (its name says what it shows; a status line says it
 * for screen readers) and the autocomplete value that tells password managers what it is: the
 * password of now ("current-password") or one being chosen ("new-password"). It hides the
 * password again when its form is sent, so the browser offers to save it as a password.
 */
export function PasswordField(props: {
  label: string;
  autoComplete: "current-password" | "new-password";
  value: string;
  onInput(value: string): void;
  hint?: string;
  minLength?: number;
  maxLength?: number;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const input = useRef<HTMLInputElement>(null);
  const [shown, setShown] = useState(false);
  useEffect(() => {
    const form = input.current?.form;
    const hide = () => setShown(false);
    form?.addEventListener("submit", hide);
    return () => form?.removeEventListener("submit", hide);
  }, []);
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <div class="password-row">
        <input
          id={id}
          ref={input}
          {...(shown ? { type: "text" } : { type: "password" })}
          autoComplete={props.autoComplete}
          autoCapitalize="off"
          spellcheck={false}
          required
          minLength={props.minLength}
          maxLength={props.maxLength}
          aria-describedby={props.hint ? hintId : undefined}
          value={props.value}
          onInput={(event) => props.onInput(event.currentTarget.value)}
        />
        <button type="button" class="secondary" aria-controls={id} onClick={() => setShown(!shown)}>
          {shown ? "Hide" : "Show"}
          <span class="visually-hidden"> password</span>
        </button>
      </div>
      <span class="visually-hidden" role="status">
        {shown ? `${props.label}: shown` : ""}
      </span>
      {props.hint && (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      )}
    </div>
  );
}

/**
 * The account's email for password managers, which save a new password under the username
 * field before it; hidden, since the member does not type it.
 */
export function UsernameForPasswordManagers({ email }: { email: string }) {
  return <input type="email" hidden autoComplete="username" value={email} readOnly />;
}

export interface NewPassword {
  password: string;
  repeat: string;
  setPassword(value: string): void;
  setRepeat(value: string): void;
  clear(): void;
  /** Said on submit when the two differ (a typo would lock the member out). */
  problem(): string | null;
}

export function useNewPassword(): NewPassword {
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  return {
    password,
    repeat,
    setPassword,
    setRepeat,
    clear: () => {
      setPassword("");
      setRepeat("");
    },
    problem: () => (password === repeat ? null : "The two passwords differ."),
  };
}

/** A new password and its repetition, with the server's rules as the hint. */
export function NewPasswordFields(props: { state: NewPassword; repeatLabel: string; hint: string }) {
  return (
    <>
      <PasswordField
        label="New password"
        autoComplete="new-password"
        minLength={12}
        maxLength={passwordMaxLength}
        hint={props.hint}
        value={props.state.password}
        onInput={props.state.setPassword}
      />
      <PasswordField
        label={props.repeatLabel}
        autoComplete="new-password"
        value={props.state.repeat}
        onInput={props.state.setRepeat}
      />
    </>
  );
}
