import { useState } from "preact/hooks";
import { renderSVG } from "uqr";
import { passwordMaxLength } from "../../../generated/limits.ts";
import { api, type Schemas, setCsrfToken } from "../api.ts";
import { ErrorNote } from "../components/notes.tsx";
import { useAction } from "../hooks.ts";
import { useSession } from "../session.ts";

/** The member's own account: password, two-factor, and ending every session. */
export function SecurityPage() {
  return (
    <>
      <h1>Security</h1>
      <ChangePassword />
      <TwoFactor />
      <SignOutEverywhere />
    </>
  );
}

function ChangePassword() {
  const { session } = useSession();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const [done, setDone] = useState<string | null>(null);
  const change = useAction(
    () => api.PUT("/account/password", { body: { current_password: current, new_password: next } }),
    (answer: Schemas["DashboardPasswordChanged"]) => {
      setCsrfToken(answer.csrf_token);
      setCurrent("");
      setNext("");
      setRepeat("");
      setDone(`Password changed. ${answer.sessions_revoked} other session(s) signed out.`);
    },
  );
  const mismatch = repeat !== "" && next !== repeat;
  return (
    <form
      class="panel"
      aria-labelledby="password-title"
      onSubmit={(event) => {
        event.preventDefault();
        setDone(null);
        if (!mismatch) void change.run();
      }}
    >
      <h2 id="password-title">Change password</h2>
      <input type="email" hidden autoComplete="username" value={session.member?.email ?? ""} readOnly />
      <label>
        Current password
        <input
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onInput={(e) => setCurrent(e.currentTarget.value)}
        />
      </label>
      <label>
        New password
        <input
          type="password"
          autoComplete="new-password"
          required
          minLength={12}
          maxLength={passwordMaxLength}
          aria-describedby="new-password-hint"
          value={next}
          onInput={(e) => setNext(e.currentTarget.value)}
        />
      </label>
      <p class="hint" id="new-password-hint">
        At least 12 characters; common passwords are refused. Your other sessions end.
      </p>
      <label>
        Repeat the new password
        <input
          type="password"
          autoComplete="new-password"
          required
          value={repeat}
          onInput={(e) => setRepeat(e.currentTarget.value)}
        />
      </label>
      <ErrorNote message={mismatch ? "The two new passwords differ." : change.error} />
      <p role="status">{done ?? ""}</p>
      <button type="submit" disabled={change.busy || mismatch}>
        Change password
      </button>
    </form>
  );
}

/** An otpauth:// URI as a QR code image (an SVG in a data: URL, which the CSP allows). */
function qrImage(uri: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(renderSVG(uri, { border: 2 }))}`;
}

function TwoFactor() {
  const { session, update } = useSession();
  const [setup, setSetup] = useState<Schemas["DashboardTotpSetup"] | null>(null);
  const [code, setCode] = useState("");
  const [recovery, setRecovery] = useState<string[] | null>(null);
  const [password, setPassword] = useState("");
  const start = useAction(() => api.POST("/account/totp"), setSetup);
  const confirm = useAction(
    () => api.POST("/account/totp/confirm", { body: { code: code.trim() } }),
    (answer: Schemas["DashboardTotpEnabled"]) => {
      setSetup(null);
      setCode("");
      setRecovery(answer.recovery_codes);
      void update();
    },
  );
  const disable = useAction(
    () => api.POST("/account/totp/disable", { body: { password } }),
    () => {
      setPassword("");
      void update();
    },
  );
  const enabled = session.member?.totp_enabled ?? false;
  return (
    <section class="panel" aria-labelledby="totp-title">
      <h2 id="totp-title">Two-factor authentication</h2>
      <p>
        Status: <strong>{enabled ? "on" : "off"}</strong>
      </p>
      {recovery && (
        <div class="once">
          <h3>Recovery codes</h3>
          <p class="warning">
            <strong>Save these now:</strong> they are shown only this once. Each signs you in once in place of a code
            from your app.
          </p>
          <ul class="codes" data-testid="recovery-codes">
            {recovery.map((value) => (
              <li key={value}>
                <code>{value}</code>
              </li>
            ))}
          </ul>
          <button type="button" class="secondary" onClick={() => setRecovery(null)}>
            I have saved them
          </button>
        </div>
      )}
      {!enabled && !setup && (
        <>
          <ErrorNote message={start.error} />
          <button type="button" disabled={start.busy} onClick={() => start.run()}>
            Set up two-factor
          </button>
        </>
      )}
      {!enabled && setup && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void confirm.run();
          }}
        >
          <p>
            Scan the code with an authenticator app, or type the secret into it, then enter the 6-digit code it shows.
          </p>
          <img
            class="qr"
            src={qrImage(setup.otpauth_url)}
            alt="QR code of the two-factor secret"
            width={180}
            height={180}
          />
          <p>
            Secret: <code data-testid="totp-secret">{setup.secret}</code>
          </p>
          <label>
            Code from the app
            <input
              autoComplete="one-time-code"
              inputMode="numeric"
              required
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
            />
          </label>
          <ErrorNote message={confirm.error} />
          <button type="submit" disabled={confirm.busy}>
            Turn on two-factor
          </button>
        </form>
      )}
      {enabled && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void disable.run();
          }}
        >
          <label>
            Password (to turn two-factor off)
            <input
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <ErrorNote message={disable.error} />
          <button type="submit" class="danger" disabled={disable.busy}>
            Turn off two-factor
          </button>
        </form>
      )}
    </section>
  );
}

function SignOutEverywhere() {
  const { update } = useSession();
  const revoke = useAction(
    () => api.POST("/sessions/revoke-all"),
    () => void update(),
  );
  return (
    <section class="panel" aria-labelledby="everywhere-title">
      <h2 id="everywhere-title">Sign out everywhere</h2>
      <p>Ends every session of your account, this one included: on other computers you must sign in again.</p>
      <ErrorNote message={revoke.error} />
      <button type="button" class="danger" disabled={revoke.busy} onClick={() => revoke.run()}>
        Sign out everywhere
      </button>
    </section>
  );
}
