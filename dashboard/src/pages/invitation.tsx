import { useEffect, useState } from "preact/hooks";
import { api, messageOf, type Schemas } from "../api.ts";
import { ActionForm } from "../components/action-form.tsx";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { NewPasswordFields, UsernameForPasswordManagers, useNewPassword } from "../components/password-field.tsx";
import { useAction } from "../hooks.ts";
import { modePath, navigate } from "../route.ts";
import { useSession } from "../session.ts";

/**
 * The invitation link's page: the token is in the fragment (#…), which the browser never sends
 * to a server; it is read once, then removed from the address bar and the history.
 */
export function InvitationPage() {
  const { update } = useSession();
  const [token] = useState(() => decodeURIComponent(location.hash.slice(1)));
  const [preview, setPreview] = useState<Schemas["DashboardInvitationPreview"] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const password = useNewPassword();

  useEffect(() => {
    history.replaceState(null, "", location.pathname);
    if (!token) return setError("This link has no invitation in it: open the whole link you were sent.");
    api.POST("/invitations/inspect", { body: { token } }).then(
      ({ data, error: refused }) => (data ? setPreview(data) : setError(messageOf(refused))),
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, [token]);

  const accept = useAction(
    () => api.POST("/invitations/accept", { body: { token, password: password.password } }),
    async (session) => {
      await update(session);
      navigate(modePath("test", "overview"), { replace: true });
    },
  );

  return (
    <main id="content" class="narrow">
      <h1>Accept your invitation</h1>
      {!preview && !error && <Loading what="the invitation" />}
      {preview && (
        <>
          <p>
            You are invited to <strong>{preview.brand_name}</strong> as <strong>{preview.role}</strong>, with the email{" "}
            <strong>{preview.email}</strong>. Choose a password to finish.
          </p>
          <ActionForm action={accept} submitLabel="Set password and sign in" check={password.problem}>
            <UsernameForPasswordManagers email={preview.email} />
            <NewPasswordFields
              state={password}
              repeatLabel="Repeat the password"
              hint="At least 12 characters; common passwords are refused."
            />
          </ActionForm>
        </>
      )}
      <ErrorNote message={error} />
    </main>
  );
}
