import { useRef, useState } from "preact/hooks";
import { scopeValues } from "../../../generated/api.ts";
import { api, type Mode, type Schemas } from "../api.ts";
import { ActionForm } from "../components/action-form.tsx";
import { CheckboxGroup } from "../components/checkbox-group.tsx";
import { LoadedTable } from "../components/loaded-table.tsx";
import { Notice, ReadOnlyNote } from "../components/notes.tsx";
import { OnceSecret } from "../components/once-secret.tsx";
import { RemoveRowButton } from "../components/remove-row-button.tsx";
import { Time } from "../format.tsx";
import { useAction, useLoad } from "../hooks.ts";
import { canChange, useSession } from "../session.ts";

type Scope = Schemas["Scope"];
type Key = Schemas["DashboardKey"];

const COLUMNS = [
  { header: "Name", cell: (key: Key) => key.name },
  // The mode and last four characters, to match a key at hand (or a leaked one) to its row.
  { header: "Key", cell: (key: Key) => (key.key_hint ? <code>{key.key_hint}</code> : "—") },
  { header: "Environment", cell: (key: Key) => key.environment },
  { header: "Scopes", cell: (key: Key) => key.scopes.join(", ") },
  { header: "Created", cell: (key: Key) => <Time iso={key.created_at} /> },
  { header: "Last used", cell: (key: Key) => <Time iso={key.last_used_at} /> },
  { header: "Expires", cell: (key: Key) => (key.expires_at ? <Time iso={key.expires_at} /> : "never") },
  { header: "Revoked", cell: (key: Key) => (key.revoked_at ? <Time iso={key.revoked_at} /> : "—") },
];

/** API keys of the mode: list, create (shown once), revoke (after a confirmation). */
export function KeysPage({ mode }: { mode: Mode }) {
  const { session } = useSession();
  const keys = useLoad(() => api.GET("/modes/{mode}/keys", { params: { path: { mode } } }), [mode]);
  const [created, setCreated] = useState<Schemas["KeyCreated"] | null>(null);
  // Where focus goes when what held it goes away (the key shown once, a revoked row's button).
  const list = useRef<HTMLHeadingElement>(null);
  const revoke = useAction(
    (keyId: string) => api.DELETE("/modes/{mode}/keys/{key_id}", { params: { path: { mode, key_id: keyId } } }),
    () => {
      keys.reload();
      list.current?.focus();
    },
  );
  const editable = canChange(session);
  const liveBlocked = mode === "live" && !session.brand?.live_keys_allowed;
  return (
    <>
      <h1>API keys ({mode})</h1>
      {!editable && <ReadOnlyNote role={session.member?.role ?? "viewer"} />}
      {liveBlocked && <Notice>Live keys need the Growth plan or above: ask the operator to change your plan.</Notice>}
      {created ? (
        <OnceSecret
          label={`Your new ${created.environment} key`}
          value={created.key}
          onDone={() => {
            setCreated(null);
            list.current?.focus();
          }}
        />
      ) : (
        editable && !liveBlocked && <CreateKey mode={mode} onCreated={(key) => (setCreated(key), keys.reload())} />
      )}
      <h2 tabIndex={-1} ref={list}>
        Keys
      </h2>
      <LoadedTable
        loaded={keys}
        actionError={revoke.error}
        what="keys"
        empty={`No ${mode} keys yet.`}
        rows={keys.data?.keys}
        columns={COLUMNS}
        rowKey={(key) => key.key_id}
        actions={(key) =>
          editable &&
          !key.revoked_at && (
            <RemoveRowButton
              verb="Revoke"
              row={key.name}
              kind="key"
              question={`Revoke the key "${key.name}"? Requests made with it are refused from now on; this cannot be undone.`}
              action={revoke}
              id={key.key_id}
            />
          )
        }
      />
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
  return (
    <ActionForm title={`Create a ${mode} key`} action={create} submitLabel="Create key" ready={scopes.length > 0}>
      <label>
        Name
        <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <CheckboxGroup legend="Scopes" values={scopeValues} checked={scopes} onChange={setScopes} />
      <label>
        Expires on (optional, end of day UTC)
        <input type="date" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
      </label>
    </ActionForm>
  );
}
