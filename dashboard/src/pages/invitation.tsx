import { useEffect, useState } from "preact/hooks";
import { passwordMaxLength } from "../../../generated/limits.ts";
import { api, messageOf, type Schemas } from "../api.ts";
import { ErrorNote, Loading } from "../components/notes.tsx";
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
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    history.replaceState(null, "", location.pathname);
    if (!token) return setError("This link has no invitation in it: open the whole link you were sent.");
    api.POST("/invitations/inspect", { body: { token } }).then(
      ({ data, error: refused }) => (data ? setPreview(data) : setError(messageOf(refused))),
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, [token]);

  const accept = async (event: Event) => {
    event.preventDefault();
    if (password !== repeat) return setError("The two passwords differ.");
    setBusy(true);
    setError(null);
    try {
      const { data, error: refused } = await api.POST("/invitations/accept", { body: { token, password } });
      if (!data) return setError(messageOf(refused));
      await update(data);
      navigate(modePath("test", "overview"), { replace: true });
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

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
          <form onSubmit={accept}>
            <input type="email" hidden autoComplete="username" value={preview.email} readOnly />
            <label>
              New password
              <input
                type="password"
                autoComplete="new-password"
                required
                minLength={12}
                maxLength={passwordMaxLength}
                aria-describedby="password-hint"
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </label>
            <p class="hint" id="password-hint">
              At least 12 characters; common passwords are refused.
            </p>
            <label>
              Repeat the password
              <input
                type="password"
                autoComplete="new-password"
                required
                value={repeat}
                onInput={(e) => setRepeat(e.currentTarget.value)}
              />
            </label>
            <ErrorNote message={error} />
            <button type="submit" disabled={busy}>
              Set password and sign in
            </button>
          </form>
        </>
      )}
      {!preview && <ErrorNote message={error} />}
    </main>
  );
}
