/**
 * The contract's limits and patterns that code needs as values (to clamp, to default, to generate
 * requests at the edges), read from the schemas that state them so nothing restates them by hand.
 */
import type { Json } from "./indexed.ts";
import type { OperationIndex } from "./operations.ts";

export interface ContractLimits {
  /** GET /streams `limit`: its default, and the range the page size applied is clamped to (StreamList `limit`). */
  readonly pageSize: { readonly min: number; readonly max: number; readonly default: number };
  /** GET /streams `offset`: its default and the range the offset applied is clamped to (StreamList `offset`). */
  readonly offset: { readonly min: number; readonly max: number; readonly default: number };
  /** GET /streams `status`: the longest filter kept (a longer one is cut to it, and so matches nothing). */
  readonly statusFilterMaxLength: number;
  /** DELETE /webhooks `id`: the longest id kept (a longer one is cut to it, and so names no webhook). */
  readonly webhookIdMaxLength: number;
  /** The longest error `message` (Error `error.message`): the server cuts longer ones. */
  readonly errorMessageMaxLength: number;
  /** The longest delivery `error` the operator API shows (WebhookDelivery `error`): longer ones are cut. */
  readonly deliveryErrorMaxLength: number;
  /** The longest receiver's answer a delivery's attempt shows (DeliveryAttempt `response_body`): longer ones are cut. */
  readonly attemptResponseMaxLength: number;
  /** POST /streams `duration_minutes`: the planned length's range. */
  readonly durationMinutes: { readonly min: number; readonly max: number };
  /** GET /analytics `period`: the values and the default. */
  readonly periods: { readonly values: readonly string[]; readonly default: string };
  /** The shape of an API key (`svc_live_…`/`svc_test_…`), as the operator API's key creation answers it. */
  readonly apiKeyPattern: RegExp;
  /** The longest password a dashboard member can set or send: every password field of the dashboard API states it. */
  readonly passwordMaxLength: number;
  /** Webhooks one brand may have in one mode (WebhookList `webhooks` maxItems): POST /webhooks refuses more. */
  readonly webhooksPerBrand: number;
  /**
   * A brand's caps (`key_limit`, `invitation_limit`, `member_limit`): the maxItems of the lists
   * that show them, so a list can always show everything a cap lets a brand have.
   */
  readonly brandCaps: { readonly keys: number; readonly openInvitations: number; readonly members: number };
  /**
   * A member's sessions as the dashboard lists them (DashboardSessionList): how many are listed
   * (`sessions` maxItems) and the longest `User-Agent` kept with one (`user_agent` maxLength).
   */
  readonly memberSessions: { readonly listed: number; readonly userAgentMaxLength: number };
  /** A stream's timeline in the dashboard (DashboardStreamTimeline): its most entries and deliveries. */
  readonly streamTimeline: { readonly entries: number; readonly deliveries: number };
}

/** `value`, or a message naming where in the contract it was expected. */
function stated<T>(value: T | undefined, where: string): T {
  if (value === undefined || value === null) throw new Error(`the contract no longer states ${where}`);
  return value;
}

function queryParameter(operations: OperationIndex, operationId: string, name: string): Json {
  const parameter = operations
    .byId(operationId)
    .parameters.find((candidate) => candidate.in === "query" && candidate.name === name);
  return stated(parameter?.schema as Json | undefined, `the query parameter ${name} of ${operationId}`);
}

function jsonSchema(response: Json | undefined, where: string): Json {
  return stated(response?.content?.["application/json"]?.schema as Json | undefined, where);
}

/** The dashboard API's password fields: operationId and body field. */
const PASSWORD_FIELDS = [
  ["dashboardSignIn", "password"],
  ["dashboardAcceptInvitation", "password"],
  ["dashboardChangePassword", "current_password"],
  ["dashboardChangePassword", "new_password"],
  ["dashboardDisableTotp", "password"],
  ["dashboardRegenerateRecoveryCodes", "password"],
  ["dashboardCompletePasswordReset", "password"],
] as const;

/**
 * The one maxLength of the password fields. They must agree: a password that can be set must be
 * one that signs in, and one longer than any that can be set is refused as a bound, not checked.
 */
function passwordMaxLength(operations: OperationIndex): number {
  const bounds = PASSWORD_FIELDS.map(([operationId, field]) => {
    const schema = operations.byId(operationId).requestSchema?.properties?.[field] as Json | undefined;
    return [
      `${operationId} ${field}`,
      stated(schema?.maxLength as number | undefined, `the maxLength of ${operationId} ${field}`),
    ] as const;
  });
  if (new Set(bounds.map(([, bound]) => bound)).size > 1) {
    const listed = bounds.map(([where, bound]) => `${where} ${bound}`).join(", ");
    throw new Error(`the contract's password fields must state one maxLength: ${listed}`);
  }
  return bounds[0]![1];
}

/** The maxItems of the array `field` of the 200 body of `operationId`. */
function listBound(operations: OperationIndex, operationId: string, field: string): number {
  const body = jsonSchema(operations.byId(operationId).responses.get(200), `the 200 body of ${operationId}`);
  return stated(body.properties?.[field]?.maxItems as number | undefined, `the maxItems of ${operationId} ${field}`);
}

/** The caps, from the dashboard's lists; the operator's key list must state the same bound. */
function brandCaps(operations: OperationIndex): ContractLimits["brandCaps"] {
  const keys = listBound(operations, "dashboardListKeys", "keys");
  const operatorKeys = listBound(operations, "adminListKeys", "keys");
  if (operatorKeys !== keys)
    throw new Error(`the contract's key lists must state one maxItems: dashboard ${keys}, operator ${operatorKeys}`);
  return {
    keys,
    openInvitations: listBound(operations, "dashboardListMembers", "invitations"),
    members: listBound(operations, "dashboardListMembers", "members"),
  };
}

export function readLimits(operations: OperationIndex): ContractLimits {
  const page =
    jsonSchema(operations.byId("listStreams").responses.get(200), "the 200 body of listStreams").properties ?? {};
  const limit = queryParameter(operations, "listStreams", "limit");
  const offset = queryParameter(operations, "listStreams", "offset");
  const duration = operations.byId("createStream").requestSchema?.properties?.duration_minutes as Json | undefined;
  const period = queryParameter(operations, "getAnalytics", "period");
  const key = jsonSchema(operations.byId("adminCreateKey").responses.get(201), "the 201 body of adminCreateKey")
    .properties?.key as Json | undefined;
  const status = queryParameter(operations, "listStreams", "status");
  const webhookId = queryParameter(operations, "deleteWebhook", "id");
  const error = jsonSchema(operations.byId("createStream").responses.get(400), "the 400 body of createStream")
    .properties?.error as Json | undefined;
  const webhooks = jsonSchema(operations.byId("listWebhooks").responses.get(200), "the 200 body of listWebhooks")
    .properties?.webhooks as Json | undefined;
  const delivery =
    jsonSchema(
      operations.byId("adminRetryWebhookDelivery").responses.get(200),
      "the 200 body of adminRetryWebhookDelivery",
    ).properties ?? {};
  const sessions = jsonSchema(
    operations.byId("dashboardListSessions").responses.get(200),
    "the 200 body of dashboardListSessions",
  ).properties?.sessions as Json | undefined;
  return {
    pageSize: {
      min: stated(page.limit?.minimum, "StreamList limit minimum"),
      max: stated(page.limit?.maximum, "StreamList limit maximum"),
      default: stated(limit.default, "the default of listStreams limit"),
    },
    offset: {
      min: stated(page.offset?.minimum, "StreamList offset minimum"),
      max: stated(page.offset?.maximum, "StreamList offset maximum"),
      default: stated(offset.default, "the default of listStreams offset"),
    },
    statusFilterMaxLength: stated(status.maxLength, "the maxLength of listStreams status"),
    webhookIdMaxLength: stated(webhookId.maxLength, "the maxLength of deleteWebhook id"),
    errorMessageMaxLength: stated(error?.properties?.message?.maxLength, "the maxLength of an error message"),
    deliveryErrorMaxLength: stated(delivery.error?.maxLength, "the maxLength of WebhookDelivery error"),
    attemptResponseMaxLength: stated(
      jsonSchema(operations.byId("getWebhookDelivery").responses.get(200), "the 200 body of getWebhookDelivery")
        .properties?.attempts?.items?.properties?.response_body?.maxLength,
      "the maxLength of DeliveryAttempt response_body",
    ),
    durationMinutes: {
      min: stated(duration?.minimum, "StreamCreate duration_minutes minimum"),
      max: stated(duration?.maximum, "StreamCreate duration_minutes maximum"),
    },
    periods: {
      values: stated(period.enum, "the values of getAnalytics period"),
      default: stated(period.default, "the default of getAnalytics period"),
    },
    apiKeyPattern: new RegExp(stated(key?.pattern, "the pattern of KeyCreated key")),
    passwordMaxLength: passwordMaxLength(operations),
    webhooksPerBrand: stated(webhooks?.maxItems, "the maxItems of WebhookList webhooks"),
    brandCaps: brandCaps(operations),
    memberSessions: {
      listed: listBound(operations, "dashboardListSessions", "sessions"),
      userAgentMaxLength: stated(
        sessions?.items?.properties?.user_agent?.maxLength,
        "the maxLength of DashboardSessionInfo user_agent",
      ),
    },
    streamTimeline: {
      entries: listBound(operations, "dashboardGetStreamTimeline", "entries"),
      deliveries: listBound(operations, "dashboardGetStreamTimeline", "deliveries"),
    },
  };
}
