// Type-level tests, checked by `tsc --noEmit` (npm run lint): a handler's request body is the one
// its operation states in openapi.yaml, and so is its query, so handlers read them without casts.
import { expectTypeOf } from "vitest";
import type { components } from "../../generated/api.ts";
import type { OperationHandlers, OperationRequest } from "./dispatch.ts";

type Schemas = components["schemas"];

expectTypeOf<OperationRequest<"createStream">["body"]>().toEqualTypeOf<Schemas["StreamCreate"]>();
expectTypeOf<OperationRequest<"createWebhook">["body"]>().toEqualTypeOf<Schemas["WebhookCreate"]>();
expectTypeOf<OperationRequest<"dashboardCreateKey">["body"]>().toEqualTypeOf<Schemas["DashboardKeyCreate"]>();
// Operations that take no body.
expectTypeOf<OperationRequest<"listStreams">["body"]>().toEqualTypeOf<undefined>();
// Each handler of a set gets its own operation's request.
expectTypeOf<Parameters<OperationHandlers<"createStream" | "listStreams">["createStream"]>[0]>().toEqualTypeOf<
  OperationRequest<"createStream">
>();
// The query as the contract states it: a dashboard filter is the contract's enum, not a string.
expectTypeOf<OperationRequest<"dashboardListAuditLog">["query"]["action"]>().toEqualTypeOf<
  Schemas["DashboardAuditAction"] | undefined
>();
expectTypeOf<OperationRequest<"adminListKeys">["query"]["brand_id"]>().toEqualTypeOf<string>();
