import { useState } from "preact/hooks";
import { renderSVG } from "uqr";
import { api, type Schemas, setCsrfToken } from "../api.ts";
import { ActionForm } from "../components/action-form.tsx";
import { ErrorNote } from "../components/notes.tsx";
import { RecoveryCodes } from "../components/recovery-codes.tsx";
import {
  NewPasswordFields,
  PasswordField,
  UsernameForPasswordManagers,
  useNewPassword,
} from "../components/password-field.tsx";
import { useAction } from "../hooks.ts";
import { useSession } from "../session.ts";
import { SessionsPanel } from "./sessions.tsx";

/** The member's own account: password, two-factor, their sessions, and ending every session. */
export function SecurityPage() {
  return (
    <>
      <h1>Security</h1>
      <ChangePassword />
      <TwoFactor />
      <SessionsPanel />
      <SignOutEverywhere />
    </>
  );
}

/** With two-factor on, sensitive changes also take the current code from the app (or a recovery code). */
function SecondFactorField({ value, onInput }: { value: string; onInput: (value: string) => void }) {
  const { session } = useSession();
  if (!session.member?.totp_enabled) return null;
  return (
    <label>
      Code from the authenticator app (or a recovery code)
      <input autoComplete="one-time-code" required value={value} onInput={(e) => onInput(e.currentTarget.value)} />
    </label>
  );
}

const withCode = (code: string) => (code.trim() ? { totp_code: code.trim() } : {});

function ChangePassword() {
  const { session } = useSession();
  const [current, setCurrent] = useState("");
  const [code, setCode] = useState("");
  const next = useNewPassword();
  const [done, setDone] = useState<string | null>(null);
  const change = useAction(
    () =>
      api.PUT("/account/password", {
        body: { current_password: current, new_password: next.password, ...withCode(code) },
      }),
    (answer: Schemas["DashboardPasswordChanged"]) => {
      setCsrfToken(answer.csrf_token);
      setCurrent("");
      setCode("");
      next.clear();
      setDone(`Password changed. ${answer.sessions_revoked} other session(s) signed out.`);
    },
  );
  return (
    <ActionForm
      title="Change password"
      action={change}
      submitLabel="Change password"
      check={next.problem}
      onSubmit={() => setDone(null)}
    >
      <UsernameForPasswordManagers email={session.member?.email ?? ""} />
      <PasswordField label="Current password" autoComplete="current-password" value={current} onInput={setCurrent} />
      <SecondFactorField value={code} onInput={setCode} />
      <NewPasswordFields
        state={next}
        repeatLabel="Repeat the new password"
        hint="At least 12 characters; common passwords are refused. Your other sessions end."
      />
      <p role="status">{done ?? ""}</p>
    </ActionForm>
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
  const [proof, setProof] = useState("");
  const start = useAction(
    () => api.POST("/account/totp", { body: { password } }),
    (answer: Schemas["DashboardTotpSetup"]) => {
      setPassword("");
      setSetup(answer);
    },
  );
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
    () => api.POST("/account/totp/disable", { body: { password, ...withCode(proof) } }),
    () => {
      setPassword("");
      setProof("");
      void update();
    },
  );
  const replace = useAction(
    () => api.POST("/account/recovery-codes", { body: { password, ...withCode(proof) } }),
    (answer: Schemas["DashboardTotpEnabled"]) => {
      setPassword("");
      setProof("");
      setRecovery(answer.recovery_codes);
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
        <RecoveryCodes
          codes={recovery}
          account={{ email: session.member?.email ?? "", brand: session.brand?.name ?? "" }}
          onDone={() => setRecovery(null)}
        />
      )}
      {!enabled && !setup && (
        <ActionForm action={start} submitLabel="Set up two-factor">
          <PasswordField
            label="Password (to set up two-factor)"
            autoComplete="current-password"
            value={password}
            onInput={setPassword}
          />
        </ActionForm>
      )}
      {!enabled && setup && (
        <ActionForm action={confirm} submitLabel="Turn on two-factor">
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
        </ActionForm>
      )}
      {enabled && (
        <>
          <ActionForm action={disable} submitLabel="Turn off two-factor" danger>
            <PasswordField
              label="Password (to turn two-factor off)"
              autoComplete="current-password"
              value={password}
              onInput={setPassword}
            />
            <SecondFactorField value={proof} onInput={setProof} />
          </ActionForm>
          <ActionForm action={replace} submitLabel="Replace the recovery codes">
            <p>New recovery codes, with the password and a code above; the old ones stop working.</p>
          </ActionForm>
        </>
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
