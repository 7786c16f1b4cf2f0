import { ApiError } from "../../errors.ts";
import type { OperationHandler, OperationHandlers, ServedOperationId } from "../dispatch.ts";

/** The dashboard API's operations (tag Dashboard in openapi.yaml) and the operator's invitation. */
export type DashboardOperationId = Extract<ServedOperationId, `dashboard${string}`> | "adminInviteMember";

const notYet: OperationHandler = () => {
  throw new ApiError("not_found", "The dashboard API is not available yet.");
};

/** Placeholder answers until each operation is implemented. */
export function dashboardHandlers(): OperationHandlers<DashboardOperationId> {
  return {
    adminInviteMember: notYet,
    dashboardGetSession: notYet,
    dashboardSignIn: notYet,
    dashboardSignOut: notYet,
    dashboardSignOutEverywhere: notYet,
    dashboardInspectInvitation: notYet,
    dashboardAcceptInvitation: notYet,
    dashboardChangePassword: notYet,
    dashboardStartTotp: notYet,
    dashboardConfirmTotp: notYet,
    dashboardDisableTotp: notYet,
    dashboardListMembers: notYet,
    dashboardInviteMember: notYet,
    dashboardRevokeInvitation: notYet,
    dashboardChangeRole: notYet,
    dashboardRemoveMember: notYet,
    dashboardListAuditLog: notYet,
    dashboardGetOverview: notYet,
    dashboardListKeys: notYet,
    dashboardCreateKey: notYet,
    dashboardRevokeKey: notYet,
    dashboardListWebhooks: notYet,
    dashboardCreateWebhook: notYet,
    dashboardDeleteWebhook: notYet,
    dashboardListDeliveries: notYet,
    dashboardGetDelivery: notYet,
    dashboardListStreams: notYet,
    dashboardCreateStream: notYet,
    dashboardGetStream: notYet,
    dashboardEndStream: notYet,
    dashboardGetAnalytics: notYet,
  };
}
