import { useState } from "preact/hooks";
import { api, type Schemas } from "../api.ts";
import { ConfirmButton } from "../components/confirm.tsx";
import { ErrorNote, Loading } from "../components/notes.tsx";
import { OnceSecret } from "../components/once-secret.tsx";
import { formatTime } from "../format.ts";
import { useAction, useLoad } from "../hooks.ts";
import { isOwner, useSession } from "../session.ts";

type Role = Schemas["DashboardRole"];
const ROLES: Role[] = ["owner", "developer", "viewer"];

/** The brand's members and open invitations; owners invite, change roles and remove. */
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
      <ErrorNote message={members.error ?? changeRole.error ?? removeMember.error ?? revokeInvitation.error} />
      {!data && !members.error && <Loading what="members" />}
      {data && (
        <>
          <h2>People</h2>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Two-factor</th>
                  <th scope="col">Member since</th>
                  <th scope="col">Last sign-in</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.members.map((member) => (
                  <tr key={member.member_id}>
                    <td>{member.email}</td>
                    <td>
                      {owner ? (
                        <select
                          aria-label={`Role of ${member.email}`}
                          value={member.role}
                          disabled={changeRole.busy}
                          onChange={(e) => changeRole.run(member.member_id, e.currentTarget.value as Role)}
                        >
                          {ROLES.map((role) => (
                            <option value={role} key={role}>
                              {role}
                            </option>
                          ))}
                        </select>
                      ) : (
                        member.role
                      )}
                    </td>
                    <td>{member.totp_enabled ? "on" : "off"}</td>
                    <td>{formatTime(member.created_at)}</td>
                    <td>{formatTime(member.last_sign_in_at)}</td>
                    <td>
                      {owner && member.member_id !== session.member?.member_id && (
                        <ConfirmButton
                          label="Remove"
                          name={`Remove ${member.email}`}
                          question={`Remove ${member.email} from the brand? Their sessions end at once.`}
                          confirmLabel="Remove member"
                          onConfirm={() => removeMember.run(member.member_id)}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2>Open invitations</h2>
          {data.invitations.length === 0 && <p>None.</p>}
          {data.invitations.length > 0 && (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Email</th>
                    <th scope="col">Role</th>
                    <th scope="col">Sent</th>
                    <th scope="col">Expires</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.invitations.map((invitation) => (
                    <tr key={invitation.invitation_id}>
                      <td>{invitation.email}</td>
                      <td>{invitation.role}</td>
                      <td>{formatTime(invitation.created_at)}</td>
                      <td>{formatTime(invitation.expires_at)}</td>
                      <td>
                        {owner && (
                          <ConfirmButton
                            label="Revoke"
                            name={`Revoke invitation of ${invitation.email}`}
                            question={`Revoke the invitation of ${invitation.email}? Its link stops working.`}
                            confirmLabel="Revoke invitation"
                            onConfirm={() => revokeInvitation.run(invitation.invitation_id)}
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
      )}
    </>
  );
}

function Invite({ onInvited }: { onInvited(invitation: Schemas["DashboardInvitationCreated"]): void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("developer");
  const invite = useAction(
    () => api.POST("/members/invitations", { body: { email: email.trim(), role } }),
    (invitation: Schemas["DashboardInvitationCreated"]) => {
      setEmail("");
      onInvited(invitation);
    },
  );
  return (
    <form
      class="panel"
      aria-labelledby="invite-title"
      onSubmit={(event) => {
        event.preventDefault();
        void invite.run();
      }}
    >
      <h2 id="invite-title">Invite a member</h2>
      <label>
        Email
        <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </label>
      <div class="field">
        <label for="field-role">Role</label>
        <select id="field-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {ROLES.map((value) => (
            <option value={value} key={value}>
              {value}
            </option>
          ))}
        </select>
      </div>
      <ErrorNote message={invite.error} />
      <button type="submit" disabled={invite.busy}>
        Create invitation link
      </button>
    </form>
  );
}
