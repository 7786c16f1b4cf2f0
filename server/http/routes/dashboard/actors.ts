import type { Request, Response } from "express";
import type { MemberActor, OperatorActor } from "../../../services/members/context.ts";
import { type AuditInput, audit } from "../../../services/members/membership.ts";
import type { Clock } from "../../../services/context.ts";
import type { Queryable } from "../../../store/database.ts";
import { clientAddress } from "../../client-address.ts";
import { dashboardCallerOf } from "../../dashboard-session.ts";

/** The signed-in member acting, from the request's client address (every audit entry records it). */
export const actorOf = (req: Request, res: Response): MemberActor => ({
  member: dashboardCallerOf(res).member,
  address: clientAddress(req),
});

/** The operator acting through its API, from the request's client address. */
export const operatorOf = (req: Request): OperatorActor => ({ operator: true, address: clientAddress(req) });

/** The change's audit entry, written by the service in the transaction that makes the change. */
export const audited =
  (clock: Clock, req: Request, res: Response, entry: Omit<AuditInput, "brandId" | "targetId">) =>
  (tx: Queryable, targetId: string): Promise<void> =>
    audit(tx, actorOf(req, res), clock(), { brandId: dashboardCallerOf(res).brand.id, targetId, ...entry });
