/** The member's own account: signing in and out, accepting an invitation or a reset link, password and two-factor. */
import type { Request, Response } from "express";
import { randomToken } from "../../../domain/secrets.ts";
import type { Member, MembersContext } from "../../../services/members/context.ts";
import {
  changePassword,
  confirmTotp,
  disableTotp,
  regenerateRecoveryCodes,
  signIn,
  startTotp,
} from "../../../services/members/credentials.ts";
import { acceptInvitation, inspectInvitation } from "../../../services/members/invitations.ts";
import { brandOfMember } from "../../../services/members/membership.ts";
import { completePasswordReset, inspectPasswordReset } from "../../../services/members/password-reset.ts";
import { sessionExpiry, type SignedIn, signOut, signOutEverywhere } from "../../../services/members/sessions.ts";
import { DEVICE_KEPT_MS, rememberDevice } from "../../../services/members/sign-in-throttle.ts";
import { clientAddress } from "../../client-address.ts";
import {
  CSRF_COOKIE,
  clearSessionCookie,
  DEVICE_COOKIE,
  type DashboardHttpOptions,
  dashboardCallerOf,
  dashboardCookie,
  SESSION_COOKIE,
  sessionClientOf,
  setCookie,
} from "../../dashboard-session.ts";
import type { OperationHandlers } from "../../dispatch.ts";
import { actorOf } from "./actors.ts";
import { presentBrand, presentMember } from "./response-bodies.ts";

export function accountHandlers(
  mctx: MembersContext,
  http: DashboardHttpOptions,
): OperationHandlers<
  | "dashboardGetSession"
  | "dashboardSignIn"
  | "dashboardSignOut"
  | "dashboardSignOutEverywhere"
  | "dashboardInspectInvitation"
  | "dashboardAcceptInvitation"
  | "dashboardInspectPasswordReset"
  | "dashboardCompletePasswordReset"
  | "dashboardChangePassword"
  | "dashboardStartTotp"
  | "dashboardConfirmTotp"
  | "dashboardDisableTotp"
  | "dashboardRegenerateRecoveryCodes"
> {
  /** The browser's device token (its device cookie), if it sent one. */
  const deviceToken = (req: Request) => dashboardCookie(req, http, DEVICE_COOKIE);

  /** The member signed in from this browser: it is known for their email from now on (the device cookie, renewed). */
  async function setDeviceCookie(req: Request, res: Response, member: Member): Promise<void> {
    const token = await rememberDevice(mctx.db, member.id, deviceToken(req), mctx.clock());
    setCookie(req, res, http, DEVICE_COOKIE, token, { httpOnly: true, maxAgeMs: DEVICE_KEPT_MS });
  }

  /** A new session: the cookies, and the body every sign-in answers with. */
  async function answerSignedIn(req: Request, res: Response, status: number, signedIn: SignedIn): Promise<void> {
    const brand = await brandOfMember(mctx, signedIn.member);
    setCookie(req, res, http, SESSION_COOKIE, signedIn.sessionId, { httpOnly: true, maxAgeMs: mctx.sessionAbsoluteMs });
    await setDeviceCookie(req, res, signedIn.member);
    res.status(status).json({
      signed_in: true,
      csrf_token: signedIn.session.csrfToken,
      member: presentMember(signedIn.member),
      brand: presentBrand(brand),
      expires_at: sessionExpiry(mctx, signedIn.session).toISOString(),
    });
  }

  return {
    async dashboardGetSession(req, res) {
      const caller = res.locals.dashboard;
      if (caller) {
        res.json({
          signed_in: true,
          csrf_token: caller.session.csrfToken,
          member: presentMember(caller.member),
          brand: presentBrand(caller.brand),
          expires_at: sessionExpiry(mctx, caller.session).toISOString(),
        });
        return;
      }
      const token = dashboardCookie(req, http, CSRF_COOKIE) || randomToken();
      setCookie(req, res, http, CSRF_COOKIE, token, { httpOnly: false });
      res.json({ signed_in: false, csrf_token: token, member: null, brand: null, expires_at: null });
    },

    async dashboardSignIn(req, res) {
      const body = req.body;
      const signedIn = await signIn(mctx, {
        email: body.email,
        password: body.password,
        totpCode: body.totp_code,
        brandId: body.brand_id,
        ...sessionClientOf(req),
        device: deviceToken(req),
      });
      // The session the browser held before, if any, ends: a new id on every sign-in.
      const previous = dashboardCookie(req, http, SESSION_COOKIE);
      if (previous) await signOut(mctx, previous);
      await answerSignedIn(req, res, 200, signedIn);
    },

    async dashboardSignOut(req, res) {
      await signOut(mctx, dashboardCallerOf(res).sessionId);
      clearSessionCookie(req, res, http);
      res.json({ signed_in: false });
    },

    async dashboardSignOutEverywhere(req, res) {
      const count = await signOutEverywhere(mctx, actorOf(req, res));
      clearSessionCookie(req, res, http);
      res.json({ sessions_revoked: count });
    },

    async dashboardInspectInvitation(req, res) {
      const { invitation, brand } = await inspectInvitation(mctx, req.body.token);
      res.json({
        email: invitation.email,
        role: invitation.role,
        brand_name: brand.name,
        expires_at: invitation.expiresAt.toISOString(),
      });
    },

    async dashboardAcceptInvitation(req, res) {
      const body = req.body;
      const accepted = await acceptInvitation(mctx, body.token, body.password, sessionClientOf(req));
      await answerSignedIn(req, res, 201, accepted);
    },

    async dashboardInspectPasswordReset(req, res) {
      const found = await inspectPasswordReset(mctx, req.body.token);
      res.json({
        email: found.member.email,
        brand_name: found.brand.name,
        expires_at: found.expiresAt.toISOString(),
        turns_off_two_factor: found.turnOffTwoFactor,
      });
    },

    async dashboardCompletePasswordReset(req, res) {
      const body = req.body;
      const done = await completePasswordReset(mctx, body.token, body.password, clientAddress(req));
      res.json({ email: done.member.email, sessions_revoked: done.sessionsRevoked });
    },

    async dashboardChangePassword(req, res) {
      const caller = dashboardCallerOf(res);
      const body = req.body;
      const { signedIn, revoked } = await changePassword(mctx, caller, {
        currentPassword: body.current_password,
        newPassword: body.new_password,
        totpCode: body.totp_code,
        ...sessionClientOf(req),
        device: deviceToken(req),
      });
      setCookie(req, res, http, SESSION_COOKIE, signedIn.sessionId, {
        httpOnly: true,
        maxAgeMs: mctx.sessionAbsoluteMs,
      });
      await setDeviceCookie(req, res, signedIn.member);
      res.json({ csrf_token: signedIn.session.csrfToken, sessions_revoked: revoked });
    },

    async dashboardStartTotp(req, res) {
      const { secret, otpauthUrl } = await startTotp(
        mctx,
        dashboardCallerOf(res).member,
        { password: req.body.password, code: req.body.totp_code, device: deviceToken(req) },
        clientAddress(req),
      );
      res.json({ secret, otpauth_url: otpauthUrl });
    },

    async dashboardConfirmTotp(req, res) {
      res.json({ recovery_codes: await confirmTotp(mctx, actorOf(req, res), req.body.code) });
    },

    async dashboardDisableTotp(req, res) {
      const body = req.body;
      const member = await disableTotp(
        mctx,
        dashboardCallerOf(res).member,
        { password: body.password, code: body.totp_code, device: deviceToken(req) },
        clientAddress(req),
      );
      res.json(presentMember(member));
    },

    async dashboardRegenerateRecoveryCodes(req, res) {
      const body = req.body;
      res.json({
        recovery_codes: await regenerateRecoveryCodes(
          mctx,
          dashboardCallerOf(res).member,
          { password: body.password, code: body.totp_code, device: deviceToken(req) },
          clientAddress(req),
        ),
      });
    },
  };
}
