import type { MembersContext } from "../../../services/members/context.ts";
import { memberSessionList, revokeMemberSession } from "../../../services/members/sessions.ts";
import { clearSessionCookie, type DashboardHttpOptions, dashboardCallerOf } from "../../dashboard-session.ts";
import type { OperationHandlers } from "../../dispatch.ts";
import { actorOf } from "./actors.ts";

/** The signed-in member's own sessions: listed on the Security page, each revocable. */
export function sessionHandlers(
  mctx: MembersContext,
  http: DashboardHttpOptions,
): OperationHandlers<"dashboardListSessions" | "dashboardRevokeSession"> {
  return {
    async dashboardListSessions(_req, res) {
      const { sessions, total } = await memberSessionList(mctx, dashboardCallerOf(res));
      res.json({
        sessions: sessions.map(({ session, device, expiresAt, current }) => ({
          session_id: session.publicId,
          device,
          user_agent: session.userAgent,
          address: session.address,
          created_at: session.createdAt.toISOString(),
          last_seen_at: session.lastSeenAt.toISOString(),
          expires_at: expiresAt.toISOString(),
          current,
        })),
        total,
      });
    },

    async dashboardRevokeSession(req, res) {
      const caller = dashboardCallerOf(res);
      const id = req.params.session_id;
      const { current } = await revokeMemberSession(mctx, actorOf(req, res), caller.session, id);
      // This very session: signed out, as DELETE /session does.
      if (current) clearSessionCookie(req, res, http);
      res.json({ session_id: id.toLowerCase(), revoked: true, current });
    },
  };
}
