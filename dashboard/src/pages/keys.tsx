import { useState } from "preact/hooks";
import { scopeValues } from "../../../generated/api.ts";
import { api, type Mode, type Schemas } from "../api.ts";
import { ConfirmButton } from "../components/confirm.tsx";
import { ErrorNote, Loading, Notice, ReadOnlyNote } from "../components/notes.tsx";
import { OnceSecret } from "../components/once-secret.tsx";
import { formatTime } from "../format.ts";
import { useAction, useLoad } from "../hooks.ts";
import { canChange, useSession } from "../session.ts";

type Scope = Schemas["Scope"];

/** API keys of the mode: list, create (shown once), revoke (after a confirmation). */
export function KeysPage({ mode }: { mode: Mode }) {
  const { session } = useSession();
  const keys = useLoad(() => api.GET("/modes/{mode}/keys", { params: { path: { mode } } }), [mode]);
  const [created, setCreated] = useState<Schemas["KeyCreated"] | null>(null);
  const revoke = useAction(
    (keyId: string) => api.DELETE("/modes/{mode}/keys/{key_id}", { params: { path: { mode, key_id: keyId } } }),
    () => keys.reload(),
  );
  const editable = canChange(session);
  const liveBlocked = mode === "live" && !session.brand?.live_keys_allowed;
  return (
    <>
      <h1>API keys ({mode})</h1>
      {!editable && <ReadOnlyNote role={session.member?.role ?? "viewer"} />}
      {liveBlocked && <Notice>Live keys need the Growth plan or above: ask the operator to change your plan.</Notice>}
      {created ? (
        <OnceSecret label={`Your new ${created.environment} key`} value={created.key} onDone={() => setCreated(null)} />
      ) : (
        editable && !liveBlocked && <CreateKey mode={mode} onCreated={(key) => (setCreated(key), keys.reload())} />
      )}
      <h2>Keys</h2>
      <ErrorNote message={keys.error ?? revoke.error} />
      {!keys.data && !keys.error && <Loading what="keys" />}
      {keys.data && keys.data.keys.length === 0 && <p>No {mode} keys yet.</p>}
      {keys.data && keys.data.keys.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Environment</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">Revoked</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.keys.map((key) => (
                <tr key={key.key_id}>
                  <td>{key.name}</td>
                  <td>{key.environment}</td>
                  <td>{key.scopes.join(", ")}</td>
                  <td>{formatTime(key.created_at)}</td>
                  <td>{formatTime(key.last_used_at)}</td>
                  <td>{key.expires_at ? formatTime(key.expires_at) : "never"}</td>
                  <td>{key.revoked_at ? formatTime(key.revoked_at) : "—"}</td>
                  <td>
                    {editable && !key.revoked_at && (
                      <ConfirmButton
                        label="Revoke"
                        name={`Revoke ${key.name}`}
                        question={`Revoke the key "${key.name}"? Requests made with it are refused from now on; this cannot be undone.`}
                        confirmLabel="Revoke key"
                        disabled={revoke.busy}
                        onConfirm={() => revoke.run(key.key_id)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function CreateKey({ mode, onCreated }: { mode: Mode; onCreated(key: Schemas["KeyCreated"]): void }) {
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>([...scopeValues]);
  const [expires, setExpires] = useState("");
  const create = useAction(
    () =>
      api.POST("/modes/{mode}/keys", {
        params: { path: { mode } },
        body: { name, scopes, ...(expires ? { expires_at: new Date(`${expires}T23:59:59Z`).toISOString() } : {}) },
      }),
    (key: Schemas["KeyCreated"]) => {
      setName("");
      onCreated(key);
    },
  );
  const toggle = (scope: Scope, on: boolean) =>
    setScopes((current) => (on ? [...current, scope] : current.filter((s) => s !== scope)));
  return (
    <form
      class="panel"
      aria-labelledby="create-key-title"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2 id="create-key-title">Create a {mode} key</h2>
      <label>
        Name
        <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <fieldset>
        <legend>Scopes</legend>
        {scopeValues.map((scope) => (
          <label class="check" key={scope}>
            <input
              type="checkbox"
              checked={scopes.includes(scope)}
              onChange={(e) => toggle(scope, e.currentTarget.checked)}
            />
            {scope}
          </label>
        ))}
      </fieldset>
      <label>
        Expires on (optional, end of day UTC)
        <input type="date" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
      </label>
      <ErrorNote message={create.error} />
      <button type="submit" disabled={create.busy || scopes.length === 0}>
        Create key
      </button>
    </form>
  );
}
