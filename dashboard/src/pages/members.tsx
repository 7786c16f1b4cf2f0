import { useState } from "preact/hooks";
import { api, type Schemas } from "../api.ts";
import { ActionForm } from "../components/action-form.tsx";
import { DataTable } from "../components/data-table.tsx";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { OnceSecret } from "../components/once-secret.tsx";
import { PasswordField } from "../components/password-field.tsx";
import { RemoveRowButton } from "../components/remove-row-button.tsx";
import { SelectField } from "../components/select-field.tsx";
import { formatTime, Time } from "../format.tsx";
import { useAction, useLoad } from "../hooks.ts";
import { isOwner, useSession } from "../session.ts";

type Role = Schemas["DashboardRole"];
type Invitation = Schemas["DashboardInvitation"];
const ROLES: Role[] = ["owner", "developer", "viewer"];

const INVITATION_COLUMNS = [
  { header: "Email", cell: (invitation: Invitation) => invitation.email },
  { header: "Role", cell: (invitation: Invitation) => invitation.role },
  { header: "Sent", cell: (invitation: Invitation) => <Time iso={invitation.created_at} /> },
  { header: "Expires", cell: (invitation: Invitation) => <Time iso={invitation.expires_at} /> },
];

/**
 * The brand's members and open invitations; owners invite, change roles and remove. A removed
 * member can be invited again with the same email: they join anew.
 */
export function MembersPage() {
  const { session } = useSession();
  const members = useLoad(() => api.GET("/members"), []);
  const [invited, setInvited] = useState<Schemas["DashboardInvitationCreated"] | null>(null);
  const changeRole = useAction(
    (memberId: string, role: Role) =>
      api.PATCH("/members/{member_id}", { params: { path: { member_id: memberId } }, body: { role } }),
    () => members.reload(),
  );
  const removeMember = useAction(
    (memberId: string) => api.DELETE("/members/{member_id}", { params: { path: { member_id: memberId } } }),
    () => members.reload(),
  );
  const revokeInvitation = useAction(
    (invitationId: string) =>
      api.DELETE("/members/invitations/{invitation_id}", { params: { path: { invitation_id: invitationId } } }),
    () => members.reload(),
  );
  const [resetLink, setResetLink] = useState<Schemas["DashboardPasswordResetIssued"] | null>(null);
  const [resetFor, setResetFor] = useState<Schemas["DashboardMember"] | null>(null);
  const [promote, setPromote] = useState<Schemas["DashboardMember"] | null>(null);
  const unlock = useAction(
    (memberId: string) => api.POST("/members/unlock", { body: { member_id: memberId } }),
    () => undefined,
  );
  const owner = isOwner(session);
  const data = members.data;
  return (
    <>
      <h1>Members</h1>
      {!owner && <p class="note">Only owners invite members and change roles.</p>}
      {invited ? (
        <OnceSecret
          label={`Invitation link for ${invited.email} (valid until ${formatTime(invited.expires_at)})`}
          value={invited.url}
          onDone={() => setInvited(null)}
        />
      ) : (
        owner && <Invite onInvited={(invitation) => (setInvited(invitation), members.reload())} />
      )}
      {promote && (
        <OwnerGrant
          member={promote}
          onDone={() => {
            setPromote(null);
            members.reload();
          }}
          onCancel={() => setPromote(null)}
        />
      )}
      {resetFor && (
        <IssueResetLink
          member={resetFor}
          onIssued={(link) => {
            setResetFor(null);
            setResetLink(link);
          }}
          onCancel={() => setResetFor(null)}
        />
      )}
      {resetLink && (
        <OnceSecret
          label={`Password-reset link for ${resetLink.email} (valid until ${formatTime(resetLink.expires_at)})`}
          value={resetLink.url}
          onDone={() => setResetLink(null)}
        />
      )}
      <ErrorNote
        message={members.error ?? changeRole.error ?? removeMember.error ?? revokeInvitation.error ?? unlock.error}
      />
      {!data && !members.error && <Loading what="members" />}
      {data && (
        <>
          <h2>People</h2>
          <DataTable
            rows={data.members}
            rowKey={(member) => member.member_id}
            columns={[
              { header: "Email", cell: (member) => member.email },
              {
                header: "Role",
                cell: (member) =>
                  owner ? (
                    <select
                      aria-label={`Role of ${member.email}`}
                      value={member.role}
                      disabled={changeRole.busy}
                      onChange={(e) => {
                        const role = e.currentTarget.value as Role;
                        // Making an owner asks for your password first (OwnerGrant).
                        if (role === "owner") {
                          e.currentTarget.value = member.role;
                          setPromote(member);
                        } else void changeRole.run(member.member_id, role);
                      }}
                    >
                      {ROLES.map((role) => (
                        <option value={role} key={role}>
                          {role}
                        </option>
                      ))}
                    </select>
                  ) : (
                    member.role
                  ),
              },
              { header: "Two-factor", cell: (member) => (member.totp_enabled ? "on" : "off") },
              { header: "Member since", cell: (member) => <Time iso={member.created_at} /> },
              { header: "Last sign-in", cell: (member) => <Time iso={member.last_sign_in_at} /> },
            ]}
            actions={(member) =>
              owner &&
              member.member_id !== session.member?.member_id && (
                <>
                  <button
                    type="button"
                    class="secondary"
                    disabled={resetFor !== null}
                    onClick={() => {
                      setResetLink(null);
                      setResetFor(member);
                    }}
                  >
                    Reset link
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    disabled={unlock.busy}
                    title="Clear the member's failed sign-ins"
                    onClick={() => unlock.run(member.member_id)}
                  >
                    Unlock
                  </button>
                  <RemoveRowButton
                    verb="Remove"
                    row={member.email}
                    kind="member"
                    question={`Remove ${member.email} from the brand? Their sessions end at once. You can invite them again later.`}
                    action={removeMember}
                    id={member.member_id}
                  />
                </>
              )
            }
          />
          <h2>Open invitations</h2>
          {data.invitations.length === 0 && <p>None.</p>}
          {data.invitations.length > 0 && (
            <DataTable
              rows={data.invitations}
              rowKey={(invitation) => invitation.invitation_id}
              columns={INVITATION_COLUMNS}
              actions={(invitation) =>
                owner && (
                  <RemoveRowButton
                    verb="Revoke"
                    row={`invitation of ${invitation.email}`}
                    kind="invitation"
                    question={`Revoke the invitation of ${invitation.email}? Its link stops working.`}
                    action={revokeInvitation}
                    id={invitation.invitation_id}
                  />
                )
              }
            />
          )}
        </>
      )}
    </>
  );
}

/**
 * A password-reset link for another member: the owner's own password (and code, with two-factor
 * on) first, so a session taken over cannot issue one; optionally turning the member's two-factor
 * off, which the link's page tells the member before it is used.
 */
function IssueResetLink(props: {
  member: Schemas["DashboardMember"];
  onIssued(link: Schemas["DashboardPasswordResetIssued"]): void;
  onCancel(): void;
}) {
  const { session } = useSession();
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [turnOff, setTurnOff] = useState(false);
  const issue = useAction(
    () =>
      api.POST("/members/password-resets", {
        body: {
          member_id: props.member.member_id,
          password,
          ...(code.trim() ? { totp_code: code.trim() } : {}),
          ...(turnOff ? { turn_off_two_factor: true } : {}),
        },
      }),
    props.onIssued,
  );
  return (
    <ActionForm title={`Password-reset link for ${props.member.email}`} action={issue} submitLabel="Create reset link">
      <p>
        The link (valid 1 hour) lets {props.member.email} set a new password; it ends their sessions. Confirm it is you
        first.
      </p>
      <OwnProof password={password} setPassword={setPassword} code={code} setCode={setCode} />
      {props.member.totp_enabled && (
        <label class="check">
          <input type="checkbox" checked={turnOff} onChange={(e) => setTurnOff(e.currentTarget.checked)} />
          Also turn their two-factor off (they lost their authenticator and recovery codes)
        </label>
      )}
      <button type="button" class="secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </ActionForm>
  );
}

/** Your password (and code, with two-factor on): what making an owner asks for, as a reset link does. */
function OwnProof(props: {
  password: string;
  setPassword(value: string): void;
  code: string;
  setCode(value: string): void;
}) {
  const { session } = useSession();
  return (
    <>
      <PasswordField
        label="Your password"
        autoComplete="current-password"
        value={props.password}
        onInput={props.setPassword}
      />
      {session.member?.totp_enabled && (
        <label>
          Your code from the authenticator app (or a recovery code)
          <input
            autoComplete="one-time-code"
            required
            value={props.code}
            onInput={(e) => props.setCode(e.currentTarget.value)}
          />
        </label>
      )}
    </>
  );
}

const proofBody = (password: string, code: string) => ({
  password,
  ...(code.trim() ? { totp_code: code.trim() } : {}),
});

/** Makes a member an owner, after your password: an owner can issue reset links for every member. */
function OwnerGrant(props: { member: Schemas["DashboardMember"]; onDone(): void; onCancel(): void }) {
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const grant = useAction(
    () =>
      api.PATCH("/members/{member_id}", {
        params: { path: { member_id: props.member.member_id } },
        body: { role: "owner", ...proofBody(password, code) },
      }),
    props.onDone,
  );
  return (
    <ActionForm title={`Make ${props.member.email} an owner`} action={grant} submitLabel="Make owner">
      <p>An owner manages keys, members and their recovery. Confirm it is you first.</p>
      <OwnProof password={password} setPassword={setPassword} code={code} setCode={setCode} />
      <button type="button" class="secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </ActionForm>
  );
}

function Invite({ onInvited }: { onInvited(invitation: Schemas["DashboardInvitationCreated"]): void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("developer");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const invite = useAction(
    () =>
      api.POST("/members/invitations", {
        body: { email: email.trim(), role, ...(role === "owner" ? proofBody(password, code) : {}) },
      }),
    (invitation: Schemas["DashboardInvitationCreated"]) => {
      setEmail("");
      setPassword("");
      setCode("");
      onInvited(invitation);
    },
  );
  return (
    <ActionForm title="Invite a member" action={invite} submitLabel="Create invitation link">
      <label>
        Email
        <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </label>
      <SelectField label="Role" value={role} values={ROLES} onChange={setRole} />
      {role === "owner" && <OwnProof password={password} setPassword={setPassword} code={code} setCode={setCode} />}
    </ActionForm>
  );
}
