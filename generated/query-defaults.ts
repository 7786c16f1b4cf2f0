// Generated from openapi.yaml by `npm run generate` (scripts/generate-query-defaults.ts). Do not edit.

/** The query parameters with a `default` in openapi.yaml, by operationId: validation fills them in. */
export interface QueryDefaults {
  listStreams: "limit" | "offset";
  getAnalytics: "period";
  listWebhookDeliveries: "limit" | "offset";
  listRequests: "limit";
  dashboardListAuditLog: "limit" | "offset";
  dashboardListDeliveries: "limit" | "offset";
  dashboardListRequests: "limit";
  dashboardListStreams: "limit" | "offset";
  dashboardGetAnalytics: "period";
}
