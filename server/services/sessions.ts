import { memberSessions } from "../../generated/limits.ts";
import { DomainError } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import { deviceOf } from "../domain/user-agent.ts";
import { liveSessions, revokeSessionByPublicId, type SessionRecord } from "../store/members.ts";
import { audit, type MemberActor, type MembersContext, sessionExpiry } from "./members.ts";

/** One of a member's live sessions as the Security page shows it. */
export interface MemberSession {
  session: SessionRecord;
  /** "Firefox 128 on Windows": from the User-Agent it signed in with. */
  device: string;
  /** When it ends if unused from now. */
  expiresAt: Date;
  /** The session the request was made with. */
  current: boolean;
}

/** The signed-in member's live sessions, this one first, then the most recently seen (as many as the contract lists), and how many. */
export async function memberSessionList(
  ctx: MembersContext,
  caller: { session: SessionRecord },
): Promise<{ sessions: MemberSession[]; total: number }> {
  const { sessions, total } = await liveSessions(ctx.db, caller.session.memberId, {
    now: ctx.clock(),
    idleMs: ctx.sessionIdleMs,
    limit: memberSessions.listed,
  });
  const listed = sessions.map((session) => ({
    session,
    device: deviceOf(session.userAgent),
    expiresAt: sessionExpiry(ctx, session),
    current: session.publicId === caller.session.publicId,
  }));
  // This one first (it is among the last seen: its use is written every minute), then the others.
  listed.sort((a, b) => Number(b.current) - Number(a.current));
  return { sessions: listed, total };
}

/**
 * Ends one of the member's own live sessions, named by its `session_id`, with its audit entry;
 * 404 for any other id. Says whether it was the one the request was made with (then the member
 * is signed out).
 */
export async function revokeMemberSession(
  ctx: MembersContext,
  actor: MemberActor,
  current: SessionRecord,
  publicId: string,
): Promise<{ current: boolean }> {
  const notFound = new DomainError("not_found", `No session of yours with id ${publicId}: it may have ended already.`);
  if (!isUuid(publicId)) throw notFound;
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    const revoked = await revokeSessionByPublicId(tx, actor.member.id, publicId.toLowerCase(), {
      now,
      idleMs: ctx.sessionIdleMs,
    });
    if (!revoked) throw notFound;
    const device = deviceOf(revoked.userAgent);
    const isCurrent = revoked.publicId === current.publicId;
    const seen = revoked.address ? `, last seen from ${revoked.address}` : "";
    await audit(tx, actor, now, {
      brandId: actor.member.brandId,
      action: "session.revoked",
      targetId: revoked.publicId,
      targetName: device,
      detail: isCurrent
        ? `Signed out this session (${device}).`
        : `Ended a session of ${device}${seen}, signed in ${revoked.createdAt.toISOString()}.`,
    });
    return { current: isCurrent };
  });
}
