import { useState } from "preact/hooks";
import { api, codeOf, messageOf } from "../api.ts";
import { ErrorNote } from "../components/notes.tsx";
import { modePath, navigate } from "../route.ts";
import { useSession } from "../session.ts";

/** Where to go after signing in: the page asked for, if it is one of the dashboard's. */
function nextPath(): string {
  const next = new URLSearchParams(location.search).get("next");
  return next?.startsWith("/dashboard/") && !next.startsWith("/dashboard/sign-in")
    ? next
    : modePath("test", "overview");
}

/** Email and password, then the authenticator's code when the server asks for it (totp_required). */
export function SignInPage() {
  const { update } = useSession();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [needsCode, setNeedsCode] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = needsCode ? { email, password, totp_code: code.trim() } : { email, password };
      const { data, error: refused } = await api.POST("/session", { body });
      if (data) {
        await update(data);
        navigate(nextPath(), { replace: true });
      } else if (codeOf(refused) === "totp_required") {
        setNeedsCode(true);
      } else {
        setError(messageOf(refused));
      }
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="content" class="narrow">
      <h1>Sign in to the dashboard</h1>
      <form onSubmit={submit}>
        {!needsCode && (
          <>
            <label>
              Email
              <input
                type="email"
                autoComplete="username"
                required
                value={email}
                onInput={(e) => setEmail(e.currentTarget.value)}
              />
            </label>
            <label>
              Password
              <input
                type="password"
                autoComplete="current-password"
                required
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </label>
          </>
        )}
        {needsCode && (
          <>
            <label>
              Authentication code
              <input
                autoComplete="one-time-code"
                required
                aria-describedby="code-hint"
                value={code}
                onInput={(e) => setCode(e.currentTarget.value)}
              />
            </label>
            <p class="hint" id="code-hint">
              The 6-digit code from your authenticator app, or one of your recovery codes.
            </p>
          </>
        )}
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          {needsCode ? "Verify and sign in" : "Sign in"}
        </button>
      </form>
      <p class="muted">No account? Ask an owner of your brand, or the operator, for an invitation.</p>
    </main>
  );
}
