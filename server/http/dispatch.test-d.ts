// Type-level tests, checked by `tsc --noEmit` (npm run lint): a handler's request body is the one
// its operation states in openapi.yaml, and so are its query and path parameters, so handlers read
// them without casts.
import { expectTypeOf } from "vitest";
import type { components } from "../../generated/api.ts";
import type { OperationHandler, OperationHandlers, OperationRequest } from "./dispatch.ts";

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
// The path parameters as the contract names them, each present: no `req.params.id!`.
expectTypeOf<OperationRequest<"getStream">["params"]>().toEqualTypeOf<{ id: string }>();
expectTypeOf<OperationRequest<"dashboardGetStream">["params"]["mode"]>().toEqualTypeOf<"test" | "live">();
// A query parameter with a contract default is always there once validated; the others may be absent.
expectTypeOf<OperationRequest<"listStreams">["query"]["limit"]>().toEqualTypeOf<number>();
expectTypeOf<OperationRequest<"listStreams">["query"]["status"]>().toEqualTypeOf<string | undefined>();
expectTypeOf<OperationRequest<"getAnalytics">["query"]["period"]>().toEqualTypeOf<Schemas["Analytics"]["period"]>();
// A handler shared by the API and the dashboard takes either operation's request.
expectTypeOf<OperationHandler<"getStream" | "dashboardGetStream">>().toMatchTypeOf<OperationHandler<"getStream">>();
