import type { Request, Response } from "express";
import type { Contract } from "../../../contract/contract.ts";
import type { Period } from "../../domain/analytics.ts";
import { DomainError } from "../../domain/errors.ts";
import { isUuid } from "../../domain/ids.ts";
import { keyHint } from "../../domain/keys.ts";
import { planAllowsLiveKeys } from "../../domain/plans.ts";
import { randomToken } from "../../domain/secrets.ts";
import type { Brand, Mode, WebhookDelivery } from "../../domain/types.ts";
import { signWebhookPayload } from "../../../sdk/webhooks.ts";
import { ApiError } from "../../errors.ts";
import { brandAnalytics } from "../../services/analytics.ts";
import type { ServiceContext } from "../../services/context.ts";
import { currentViewerCount } from "../../services/lifecycle.ts";
import * as members from "../../services/members.ts";
import * as recovery from "../../services/password-reset.ts";
import { createKey, keysOf } from "../../services/operator.ts";
import { changingKeys } from "../../services/key-memo.ts";
import { endStream, getStream, listBrandStreams, startStream } from "../../services/streams.ts";
import { brandWebhooks } from "../../services/webhooks.ts";
import type { Queryable } from "../../store/database.ts";
import { countDeliveries, deliveryWithAttempts, listDeliveries } from "../../store/deliveries.ts";
import { lockBrandKey, revokeKey } from "../../store/keys.ts";
import { activeStreamCount, keyLastUse } from "../../store/dashboard-reads.ts";
import { findStream } from "../../store/streams.ts";
import { clientAddress } from "../client-address.ts";
import { componentValidator } from "../contract-schemas.ts";
import {
  CSRF_COOKIE,
  clearSessionCookie,
  type DashboardCaller,
  type DashboardHttpOptions,
  dashboardCallerOf,
  dashboardCookie,
  SESSION_COOKIE,
  sessionClientOf,
  setCookie,
} from "../dashboard-session.ts";
import type { OperationHandlers, ServedOperationId } from "../dispatch.ts";
import { listQueryOf } from "../normalize.ts";
import {
  analyticsHead,
  analyticsStream,
  deliveryErrorText,
  keyCreated,
  streamCreated,
  streamDetail,
  streamEnded,
  streamSummary,
  webhookSummary,
} from "../presenters.ts";
import { sendStreamedJson } from "../streamed-json.ts";
import { dashboardSessionHandlers } from "./dashboard-sessions.ts";
import { dashboardTimelineHandlers } from "./dashboard-timeline.ts";

/** The dashboard API's operations (tag Dashboard in openapi.yaml) and the operator's invitation. */
export type DashboardOperationId =
  | Extract<ServedOperationId, `dashboard${string}`>
  | "adminInviteMember"
  | "adminIssuePasswordReset"
  | "adminClearSignInThrottle";

export interface DashboardDeps {
  ctx: ServiceContext & { webhookAllowHosts: readonly string[] };
  members: members.MembersContext;
  http: DashboardHttpOptions;
  contract: Contract;
  /** Requests of the brand in the current minute (the API's rate-limit window). */
  requestsThisMinute(brandId: string): Promise<number>;
}

const modeOf = (req: Request<Record<string, string>>) => req.params.mode as Mode;

function presentMember(member: members.Member) {
  return {
    member_id: member.id,
    email: member.email,
    role: member.role,
    totp_enabled: member.totpSecret !== null,
    created_at: member.createdAt.toISOString(),
    last_sign_in_at: member.lastSignInAt?.toISOString() ?? null,
  };
}

function presentBrand(brand: Brand) {
  return {
    brand_id: brand.id,
    name: brand.name,
    vertical: brand.vertical,
    plan: brand.plan,
    live_keys_allowed: planAllowsLiveKeys(brand.plan),
  };
}

function invitationUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/dashboard/invitation#${token}`;
}

function resetUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/dashboard/reset#${token}`;
}

function presentInvitation(invitation: {
  id: string;
  email: string;
  role: members.Role;
  createdAt: Date;
  expiresAt: Date;
}) {
  return {
    invitation_id: invitation.id,
    email: invitation.email,
    role: invitation.role,
    created_at: invitation.createdAt.toISOString(),
    expires_at: invitation.expiresAt.toISOString(),
  };
}

export function dashboardHandlers(deps: DashboardDeps): OperationHandlers<DashboardOperationId> {
  const { ctx, http } = deps;
  const mctx = deps.members;
  const validateHead = componentValidator(deps.contract, "Analytics");
  const validateItem = componentValidator(deps.contract, "AnalyticsStream");
  const defaultPeriod = deps.contract.limits.periods.default as Period;
  const now = () => ctx.clock();
  const scopeOf = (caller: DashboardCaller, req: Request<Record<string, string>>) => ({
    brandId: caller.brand.id,
    mode: modeOf(req),
  });
  /** The signed-in member acting, from the request's client address (every audit entry records it). */
  const actorOf = (req: Request, res: Response): members.MemberActor => ({
    member: dashboardCallerOf(res).member,
    address: clientAddress(req),
  });
  /** The operator acting through its API, from the request's client address. */
  const operatorOf = (req: Request): members.OperatorActor => ({ operator: true, address: clientAddress(req) });
  /** The change's audit entry, written by the service in the transaction that makes the change. */
  const audited =
    (req: Request, res: Response, entry: Omit<members.AuditInput, "brandId" | "targetId">) =>
    (tx: Queryable, targetId: string): Promise<void> =>
      members.audit(tx, actorOf(req, res), now(), { brandId: dashboardCallerOf(res).brand.id, targetId, ...entry });

  /** A new session: the cookie, and the body every sign-in answers with. */
  async function answerSignedIn(
    req: Request,
    res: Response,
    status: number,
    signedIn: members.SignedIn,
  ): Promise<void> {
    const brand = await members.brandOfMember(mctx, signedIn.member);
    setCookie(req, res, http, SESSION_COOKIE, signedIn.sessionId, { httpOnly: true, maxAgeMs: mctx.sessionAbsoluteMs });
    res.status(status).json({
      signed_in: true,
      csrf_token: signedIn.session.csrfToken,
      member: presentMember(signedIn.member),
      brand: presentBrand(brand),
      expires_at: members.sessionExpiry(mctx, signedIn.session).toISOString(),
    });
  }

  function refuseLiveKeys(brand: Brand, mode: Mode): void {
    if (mode === "live" && !planAllowsLiveKeys(brand.plan))
      throw new ApiError(
        "plan_required",
        "Live keys need the Growth plan or above; ask the operator to change the plan.",
      );
  }

  return {
    ...dashboardSessionHandlers(mctx, http),
    ...dashboardTimelineHandlers(ctx),

    async adminInviteMember(req, res) {
      const body = req.body;
      const { invitation, token } = await members.invite(mctx, operatorOf(req), {
        brandId: body.brand_id,
        email: body.email,
        ...(body.role ? { role: body.role } : {}),
      });
      res.status(201).json({
        ...presentInvitation(invitation),
        brand_id: invitation.brandId,
        url: invitationUrl(http.publicBaseUrl, token),
      });
    },

    async adminIssuePasswordReset(req, res) {
      const body = req.body;
      const issued = await recovery.issuePasswordReset(
        mctx,
        operatorOf(req),
        { email: body.email },
        { turnOffTwoFactor: body.turn_off_two_factor ?? false },
      );
      res.status(201).json({
        member_id: issued.member.id,
        brand_id: issued.member.brandId,
        email: issued.member.email,
        expires_at: issued.expiresAt.toISOString(),
        url: resetUrl(http.publicBaseUrl, issued.token),
      });
    },

    async adminClearSignInThrottle(req, res) {
      const { member } = await recovery.clearMemberThrottle(mctx, operatorOf(req), req.body);
      res.json({ member_id: member.id, brand_id: member.brandId, email: member.email, cleared: true });
    },

    async dashboardIssuePasswordReset(req, res) {
      const caller = dashboardCallerOf(res);
      const body = req.body;
      const issued = await recovery.issuePasswordReset(
        mctx,
        actorOf(req, res),
        { brandId: caller.brand.id, memberId: body.member_id },
        { turnOffTwoFactor: body.turn_off_two_factor ?? false },
      );
      res.status(201).json({
        member_id: issued.member.id,
        email: issued.member.email,
        expires_at: issued.expiresAt.toISOString(),
        url: resetUrl(http.publicBaseUrl, issued.token),
      });
    },

    async dashboardClearSignInThrottle(req, res) {
      const caller = dashboardCallerOf(res);
      const { member } = await recovery.clearMemberThrottle(mctx, actorOf(req, res), {
        brandId: caller.brand.id,
        memberId: req.body.member_id,
      });
      res.json({ member_id: member.id, cleared: true });
    },

    async dashboardInspectPasswordReset(req, res) {
      const found = await recovery.inspectPasswordReset(mctx, req.body.token);
      res.json({
        email: found.member.email,
        brand_name: found.brand.name,
        expires_at: found.expiresAt.toISOString(),
        turns_off_two_factor: found.turnOffTwoFactor,
      });
    },

    async dashboardCompletePasswordReset(req, res) {
      const body = req.body;
      const done = await recovery.completePasswordReset(mctx, body.token, body.password, clientAddress(req));
      res.json({ email: done.member.email, sessions_revoked: done.sessionsRevoked });
    },

    async dashboardRegenerateRecoveryCodes(req, res) {
      const body = req.body;
      res.json({
        recovery_codes: await members.regenerateRecoveryCodes(
          mctx,
          dashboardCallerOf(res).member,
          { password: body.password, code: body.totp_code },
          clientAddress(req),
        ),
      });
    },

    async dashboardGetSession(req, res) {
      const caller = res.locals.dashboard;
      if (caller) {
        res.json({
          signed_in: true,
          csrf_token: caller.session.csrfToken,
          member: presentMember(caller.member),
          brand: presentBrand(caller.brand),
          expires_at: members.sessionExpiry(mctx, caller.session).toISOString(),
        });
        return;
      }
      const token = dashboardCookie(req, http, CSRF_COOKIE) || randomToken();
      setCookie(req, res, http, CSRF_COOKIE, token, { httpOnly: false });
      res.json({ signed_in: false, csrf_token: token, member: null, brand: null, expires_at: null });
    },

    async dashboardSignIn(req, res) {
      const body = req.body;
      const signedIn = await members.signIn(mctx, {
        email: body.email,
        password: body.password,
        totpCode: body.totp_code,
        ...sessionClientOf(req),
      });
      // The session the browser held before, if any, ends: a new id on every sign-in.
      const previous = dashboardCookie(req, http, SESSION_COOKIE);
      if (previous) await members.signOut(mctx, previous);
      await answerSignedIn(req, res, 200, signedIn);
    },

    async dashboardSignOut(req, res) {
      await members.signOut(mctx, dashboardCallerOf(res).sessionId);
      clearSessionCookie(req, res, http);
      res.json({ signed_in: false });
    },

    async dashboardSignOutEverywhere(req, res) {
      const count = await members.signOutEverywhere(mctx, actorOf(req, res));
      clearSessionCookie(req, res, http);
      res.json({ sessions_revoked: count });
    },

    async dashboardInspectInvitation(req, res) {
      const { invitation, brand } = await members.inspectInvitation(mctx, req.body.token);
      res.json({
        email: invitation.email,
        role: invitation.role,
        brand_name: brand.name,
        expires_at: invitation.expiresAt.toISOString(),
      });
    },

    async dashboardAcceptInvitation(req, res) {
      const body = req.body;
      const accepted = await members.acceptInvitation(mctx, body.token, body.password, sessionClientOf(req));
      await answerSignedIn(req, res, 201, accepted);
    },

    async dashboardChangePassword(req, res) {
      const caller = dashboardCallerOf(res);
      const body = req.body;
      const { signedIn, revoked } = await members.changePassword(mctx, caller, {
        currentPassword: body.current_password,
        newPassword: body.new_password,
        totpCode: body.totp_code,
        ...sessionClientOf(req),
      });
      setCookie(req, res, http, SESSION_COOKIE, signedIn.sessionId, {
        httpOnly: true,
        maxAgeMs: mctx.sessionAbsoluteMs,
      });
      res.json({ csrf_token: signedIn.session.csrfToken, sessions_revoked: revoked });
    },

    async dashboardStartTotp(_req, res) {
      const { secret, otpauthUrl } = await members.startTotp(mctx, dashboardCallerOf(res).member);
      res.json({ secret, otpauth_url: otpauthUrl });
    },

    async dashboardConfirmTotp(req, res) {
      res.json({
        recovery_codes: await members.confirmTotp(mctx, actorOf(req, res), req.body.code),
      });
    },

    async dashboardDisableTotp(req, res) {
      const body = req.body;
      const member = await members.disableTotp(
        mctx,
        dashboardCallerOf(res).member,
        { password: body.password, code: body.totp_code },
        clientAddress(req),
      );
      res.json(presentMember(member));
    },

    async dashboardListMembers(_req, res) {
      const { brand } = dashboardCallerOf(res);
      const [list, invitations] = await Promise.all([
        members.brandMembers(mctx, brand.id),
        members.openInvitations(mctx, brand.id),
      ]);
      res.json({ members: list.map(presentMember), invitations: invitations.map(presentInvitation) });
    },

    async dashboardInviteMember(req, res) {
      const caller = dashboardCallerOf(res);
      const body = req.body;
      const { invitation, token } = await members.invite(mctx, actorOf(req, res), {
        brandId: caller.brand.id,
        email: body.email,
        ...(body.role ? { role: body.role } : {}),
      });
      res.status(201).json({
        ...presentInvitation(invitation),
        brand_id: invitation.brandId,
        url: invitationUrl(http.publicBaseUrl, token),
      });
    },

    async dashboardRevokeInvitation(req, res) {
      const id = req.params.invitation_id!;
      if (!isUuid(id)) throw new ApiError("not_found", `No open invitation with id ${id}.`);
      await members.revokeInvitation(mctx, actorOf(req, res), id);
      res.json({ invitation_id: id, revoked: true });
    },

    async dashboardChangeRole(req, res) {
      const id = req.params.member_id!;
      if (!isUuid(id)) throw new ApiError("not_found", `No member with id ${id}.`);
      const member = await members.changeRole(mctx, actorOf(req, res), id, req.body.role);
      res.json(presentMember(member));
    },

    async dashboardRemoveMember(req, res) {
      const id = req.params.member_id!;
      if (!isUuid(id)) throw new ApiError("not_found", `No member with id ${id}.`);
      await members.removeMember(mctx, actorOf(req, res), id);
      res.json({ member_id: id, removed: true });
    },

    async dashboardListAuditLog(req, res) {
      const limit = Number(req.query.limit ?? 50);
      const offset = Number(req.query.offset ?? 0);
      const filter = {
        action: req.query.action as members.AuditAction | undefined,
        memberId: req.query.member_id as string | undefined,
      };
      const { brand } = dashboardCallerOf(res);
      const { entries, total } = await members.auditLog(mctx, brand.id, filter, { limit, offset });
      res.json({
        entries: entries.map((entry) => ({
          entry_id: entry.id,
          at: entry.at.toISOString(),
          actor: entry.actor,
          member_id: entry.memberId,
          address: entry.address,
          action: entry.action,
          mode: entry.mode,
          target_id: entry.targetId,
          target_name: entry.targetName,
          detail: entry.detail,
        })),
        total,
        limit,
        offset,
      });
    },

    async dashboardGetOverview(req, res) {
      const { brand } = dashboardCallerOf(res);
      const mode = modeOf(req);
      const [active, requests] = await Promise.all([
        activeStreamCount(ctx.db, brand.id, mode),
        deps.requestsThisMinute(brand.id),
      ]);
      res.json({
        brand: presentBrand(brand),
        mode,
        credits_cents: brand.creditsCents,
        credits_held_cents: brand.creditsHeldCents,
        credits_available_cents: Math.max(0, brand.creditsCents - brand.creditsHeldCents),
        plan_minutes: brand.planMinutes,
        minutes_used: brand.minutesUsed,
        minutes_left: Math.max(0, brand.planMinutes - brand.minutesUsed),
        active_streams: active,
        max_active_streams: brand.maxActiveStreams,
        requests_this_minute: requests,
        rate_limit_per_minute: brand.rateLimitPerMinute,
      });
    },

    async dashboardListKeys(req, res) {
      const { brand } = dashboardCallerOf(res);
      const mode = modeOf(req);
      const keys = await keysOf(ctx.db, brand.id, now(), mode);
      const lastUse = await keyLastUse(
        ctx.db,
        keys.map((key) => key.id),
      );
      res.json({
        keys: keys.map((key) => ({
          key_id: key.id,
          name: key.name,
          key_hint: keyHint(key.environment, key.lastFour),
          environment: key.environment,
          scopes: key.scopes,
          created_at: key.createdAt.toISOString(),
          last_used_at: lastUse.get(key.id)?.toISOString() ?? null,
          expires_at: key.expiresAt?.toISOString() ?? null,
          revoked_at: key.revokedAt?.toISOString() ?? null,
        })),
      });
    },

    async dashboardCreateKey(req, res) {
      const caller = dashboardCallerOf(res);
      const mode = modeOf(req);
      refuseLiveKeys(caller.brand, mode);
      const body = req.body;
      // The operator's own key service: the same generation, hashing and fixed scopes.
      const scopes = [...new Set(body.scopes)];
      const onCreated = audited(req, res, {
        action: "key.created",
        mode,
        targetName: body.name,
        detail: `Created key "${body.name}" (${scopes.join(", ")}).`,
      });
      const { record, key } = await createKey(
        ctx.db,
        { brand_id: caller.brand.id, name: body.name, environment: mode, scopes, expires_at: body.expires_at ?? null },
        now(),
        { onCreated },
      );
      res.status(201).json(keyCreated(record, key));
    },

    async dashboardRevokeKey(req, res) {
      const caller = dashboardCallerOf(res);
      const mode = modeOf(req);
      const id = req.params.key_id!;
      if (!isUuid(id)) throw new ApiError("not_found", `No active ${mode} key with id ${id}.`);
      // The operator's revocation and its audit entry in one transaction; the key locked, so a
      // second click waits and finds it revoked.
      // The memo of API keys (services/key-memo.ts) forgets what it holds once this has committed.
      await changingKeys(ctx.db, () =>
        ctx.db.transaction(async (tx) => {
          const key = await lockBrandKey(tx, caller.brand.id, id);
          if (!key || key.environment !== mode || key.revokedAt !== null)
            throw new ApiError("not_found", `No active ${mode} key with id ${id}.`);
          await revokeKey(tx, id, now());
          // Named as the list shows it, so the log says which key went.
          const hint = keyHint(key.environment, key.lastFour);
          await audited(req, res, {
            action: "key.revoked",
            mode,
            targetName: key.name,
            detail: `Revoked key "${key.name}"${hint ? ` (${hint})` : ""}.`,
          })(tx, id);
        }),
      );
      res.json({ key_id: id, revoked: true });
    },

    async dashboardListWebhooks(req, res) {
      res.json({ webhooks: (await brandWebhooks(ctx, scopeOf(dashboardCallerOf(res), req))).map(webhookSummary) });
    },

    async dashboardListDeliveries(req, res) {
      const caller = dashboardCallerOf(res);
      const webhookId = await ownWebhook(ctx, scopeOf(caller, req), req.params.webhook_id!);
      const limit = Number(req.query.limit ?? 50);
      const offset = Number(req.query.offset ?? 0);
      const outcome = req.query.outcome as string | undefined;
      const filter = { brandId: caller.brand.id, webhookId, ...(outcome ? { status: outcome } : {}) };
      const [deliveries, total] = await Promise.all([
        listDeliveries(ctx.db, { ...filter, limit, offset }),
        countDeliveries(ctx.db, filter),
      ]);
      res.json({ deliveries: deliveries.map(presentDelivery), total, limit, offset });
    },

    async dashboardGetDelivery(req, res) {
      const caller = dashboardCallerOf(res);
      const webhookId = await ownWebhook(ctx, scopeOf(caller, req), req.params.webhook_id!);
      const deliveryId = req.params.delivery_id!;
      const found = isUuid(deliveryId)
        ? await deliveryWithAttempts(ctx.db, { brandId: caller.brand.id, webhookId, deliveryId })
        : null;
      if (!found) throw new ApiError("not_found", `No delivery with id ${deliveryId} for this webhook.`);
      res.json({
        delivery: presentDelivery(found.delivery),
        payload: found.payload,
        attempts: found.attempts.map((attempt) => ({
          attempt: attempt.attempt,
          attempted_at: attempt.attemptedAt.toISOString(),
          response_status: attempt.responseStatus,
          response_body: attempt.responseBody,
          error: attempt.error,
          duration_ms: attempt.durationMs,
          signature: signWebhookPayload(found.payload, found.secret, { timestamp: attempt.signatureT }),
        })),
      });
    },

    async dashboardListStreams(req, res) {
      const query = listQueryOf(res);
      const { streams, total } = await listBrandStreams(ctx, scopeOf(dashboardCallerOf(res), req), query);
      const at = now();
      res.json({
        streams: streams.map((stream) => streamSummary(stream, currentViewerCount(stream, at))),
        total,
        limit: query.limit,
        offset: query.offset,
      });
    },

    async dashboardCreateStream(req, res) {
      const caller = dashboardCallerOf(res);
      const mode = modeOf(req);
      // The API's guard answers a live key on a plan below Growth 402 before anything else; so here.
      refuseLiveKeys(caller.brand, mode);
      const body = req.body;
      const onCreated = audited(req, res, {
        action: "stream.started",
        mode,
        targetName: body.product_name,
        detail: `Started "${body.product_name}" on ${body.platform}.`,
      });
      const stream = await startStream(ctx, caller.brand, mode, body, { source: "dashboard", onCreated });
      res.status(201).json(streamCreated(stream));
    },

    async dashboardGetStream(req, res) {
      const stream = await getStream(ctx, scopeOf(dashboardCallerOf(res), req), req.params.id!);
      res.json(streamDetail(stream, currentViewerCount(stream, now())));
    },

    async dashboardEndStream(req, res) {
      const scope = scopeOf(dashboardCallerOf(res), req);
      // Named by its product, read in the transaction that ends it.
      const onEnded = async (tx: Queryable, id: string) => {
        const product = (await findStream(tx, scope, id))?.productName ?? null;
        await audited(req, res, {
          action: "stream.ended",
          mode: scope.mode,
          targetName: product,
          detail: product === null ? "Ended a stream." : `Ended "${product}".`,
        })(tx, id);
      };
      const stream = await endStream(ctx, scope, req.params.id!, { onEnded });
      res.json(streamEnded(stream));
    },

    async dashboardGetAnalytics(req, res) {
      const caller = dashboardCallerOf(res);
      const period = (req.query.period as Period | undefined) ?? defaultPeriod;
      const streamId = (req.query.stream_id as string | undefined) ?? null;
      // The service GET /api/v1/analytics calls, so the numbers are the same.
      const result = await brandAnalytics(ctx, scopeOf(caller, req), period, streamId);
      await sendStreamedJson(res, {
        head: analyticsHead(result),
        validateHead,
        batches: presented(result.streams),
        validateItem,
      });
    },
  };
}

async function ownWebhook(ctx: ServiceContext, scope: { brandId: string; mode: Mode }, id: string): Promise<string> {
  const owned = isUuid(id) && (await brandWebhooks(ctx, scope)).some((webhook) => webhook.id === id);
  if (!owned) throw new DomainError("not_found", `No webhook with id ${id}.`);
  return id;
}

function presentDelivery(delivery: WebhookDelivery) {
  return {
    delivery_id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempt,
    response_status: delivery.responseStatus,
    error: deliveryErrorText(delivery.error),
    last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
    next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
    created_at: delivery.createdAt.toISOString(),
  };
}

async function* presented(batches: AsyncIterable<Parameters<typeof analyticsStream>[0][]>) {
  for await (const batch of batches) yield batch.map(analyticsStream);
}
