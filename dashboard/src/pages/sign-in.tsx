import { useState } from "preact/hooks";
import { api, codeOf } from "../api.ts";
import { ActionForm } from "../components/action-form.tsx";
import { PasswordField } from "../components/password-field.tsx";
import { useAction } from "../hooks.ts";
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
  const signIn = useAction(
    () =>
      api.POST("/session", {
        body: needsCode ? { email, password, totp_code: code.trim() } : { email, password },
      }),
    async (session) => {
      await update(session);
      navigate(nextPath(), { replace: true });
    },
    (refusal) => {
      if (codeOf(refusal) !== "totp_required") return false;
      setNeedsCode(true);
      return true;
    },
  );

  return (
    <main id="content" class="narrow">
      <h1>Sign in to the dashboard</h1>
      <ActionForm action={signIn} submitLabel={needsCode ? "Verify and sign in" : "Sign in"}>
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
            <PasswordField label="Password" autoComplete="current-password" value={password} onInput={setPassword} />
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
      </ActionForm>
      <p class="muted">No account? Ask an owner of your brand, or the operator, for an invitation.</p>
    </main>
  );
}
