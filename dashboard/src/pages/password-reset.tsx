import { useEffect, useState } from "preact/hooks";
import { api, messageOf, type Schemas } from "../api.ts";
import { ActionForm } from "../components/action-form.tsx";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { NewPasswordFields, UsernameForPasswordManagers, useNewPassword } from "../components/password-field.tsx";
import { useAction } from "../hooks.ts";

/**
 * A password-reset link's page, like the invitation's: the token is read once from the fragment
 * and removed from the address bar; the new password ends every session, so the member then signs in.
 */
export function PasswordResetPage() {
  const [token] = useState(() => decodeURIComponent(location.hash.slice(1)));
  const [preview, setPreview] = useState<Schemas["DashboardPasswordResetPreview"] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const password = useNewPassword();

  useEffect(() => {
    history.replaceState(null, "", location.pathname);
    if (!token) return setError("This link has no reset token in it: open the whole link you were sent.");
    api.POST("/password-resets/inspect", { body: { token } }).then(
      ({ data, error: refused }) => (data ? setPreview(data) : setError(messageOf(refused))),
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, [token]);

  const reset = useAction(
    () => api.POST("/password-resets/complete", { body: { token, password: password.password } }),
    () => setDone(true),
  );

  return (
    <main id="content" class="narrow">
      <h1>Set a new password</h1>
      {!preview && !error && <Loading what="the reset link" />}
      {preview && !done && (
        <>
          <p>
            A new password for <strong>{preview.email}</strong> at <strong>{preview.brand_name}</strong>. Every session
            of the account ends.{preview.turns_off_two_factor ? " Two-factor is turned off: set it up again." : ""}
          </p>
          <ActionForm action={reset} submitLabel="Set the new password" check={password.problem}>
            <UsernameForPasswordManagers email={preview.email} />
            <NewPasswordFields
              state={password}
              repeatLabel="Repeat the password"
              hint="At least 12 characters; common passwords and ones containing your email are refused."
            />
          </ActionForm>
        </>
      )}
      {done && (
        <p role="status">
          Your password is set. <a href="/dashboard/sign-in">Sign in</a> with it.
        </p>
      )}
      <ErrorNote message={error} />
    </main>
  );
}
