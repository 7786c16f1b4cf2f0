/**
 * Dashboard sessions: started by a sign-in or an accepted invitation, kept alive by use (idle and
 * absolute expiry), listed on the Security page and ended one by one or all together.
 */
import { randomUUID } from "node:crypto";
import { memberSessions } from "../../../generated/limits.ts";
import { ApiError } from "../../domain/errors.ts";
import { isUuid } from "../../domain/ids.ts";
import { randomToken, sha256Hex } from "../../domain/secrets.ts";
import { deviceOf } from "../../domain/user-agent.ts";
import type { Queryable } from "../../store/database.ts";
import { usePasswordResets, usePasswordResetsIssuedBy } from "../../store/password-resets.ts";
import {
  findSession,
  insertSession,
  liveSessions,
  revokeSession,
  revokeSessionByPublicId,
  revokeSessions,
  touchSession,
} from "../../store/dashboard-sessions.ts";
import { updateMember } from "../../store/members.ts";
import type { Member, SessionRecord } from "../../domain/types.ts";
import type { MemberActor, MembersContext } from "./context.ts";
import { audit } from "./membership.ts";

/** A session's last use is written at most this often (not on every request). */
const TOUCH_EVERY_MS = 60 * 1000;

export interface SignedIn {
  /** The cookie's value; only its hash is stored. */
  sessionId: string;
  session: SessionRecord;
  member: Member;
}

/** Where a session is begun from: the client address of the request and the browser's User-Agent. */
export interface SessionClient {
  address: string;
  userAgent: string | null;
}

/** A new session for `member`: the cookie's value is returned once, only its hash stored. */
export async function startSession(
  ctx: MembersContext,
  db: Queryable,
  member: Member,
  now: Date,
  client: SessionClient,
): Promise<SignedIn> {
  const sessionId = randomToken();
  const session: SessionRecord = {
    publicId: randomUUID(),
    memberId: member.id,
    csrfToken: randomToken(),
    createdAt: now,
    lastSeenAt: now,
    expiresAt: new Date(now.getTime() + ctx.sessionAbsoluteMs),
    userAgent: client.userAgent,
    address: client.address,
  };
  await insertSession(db, sha256Hex(sessionId), session);
  await updateMember(db, member.id, { lastSignInAt: now });
  return { sessionId, session, member: { ...member, lastSignInAt: now } };
}

/** When the session ends if unused from now: the idle expiry, capped by the absolute one. */
export function sessionExpiry(ctx: Pick<MembersContext, "sessionIdleMs">, session: SessionRecord): Date {
  return new Date(Math.min(session.lastSeenAt.getTime() + ctx.sessionIdleMs, session.expiresAt.getTime()));
}

/**
 * The session the cookie names, if it is live (neither idle too long nor past its absolute end);
 * its use is recorded, with the client address it came from.
 */
export async function currentSession(
  ctx: MembersContext,
  sessionId: string,
  address: string,
): Promise<{ session: SessionRecord; member: Member } | null> {
  const now = ctx.clock();
  const idHash = sha256Hex(sessionId);
  const found = await findSession(ctx.db, idHash, now);
  if (!found) return null;
  if (sessionExpiry(ctx, found.session) <= now) {
    await revokeSession(ctx.db, idHash, now);
    return null;
  }
  if (now.getTime() - found.session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
    await touchSession(ctx.db, idHash, now, address);
    found.session.lastSeenAt = now;
    found.session.address = address;
  }
  return found;
}

export async function signOut(ctx: MembersContext, sessionId: string): Promise<void> {
  await revokeSession(ctx.db, sha256Hex(sessionId), ctx.clock());
}

export async function signOutEverywhere(ctx: MembersContext, actor: MemberActor): Promise<number> {
  const { member } = actor;
  const now = ctx.clock();
  return ctx.db.transaction(async (tx) => {
    const count = await revokeSessions(tx, member.id, now);
    // Recovering one's account ends the way in that others hold too.
    await usePasswordResets(tx, member.id, now);
    await usePasswordResetsIssuedBy(tx, member.id, now);
    await audit(tx, actor, now, {
      brandId: member.brandId,
      action: "session.signed_out_everywhere",
      targetId: member.id,
      targetName: member.email,
      detail: `Ended ${count} session(s).`,
    });
    return count;
  });
}

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
  const notFound = new ApiError("not_found", `No session of yours with id ${publicId}: it may have ended already.`);
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
