// Type-level tests, checked by `tsc --noEmit` (npm run lint): the SDK's types follow generated/api.ts.
import { expectTypeOf } from "vitest";
import type { components } from "../generated/api.ts";
import {
  createClient,
  errorFromBody,
  verifyWebhook,
  verifyWebhookAsync,
  type ApiError,
  type ConcurrencyLimitError,
  type ErrorCode,
  type RetryEvent,
  type StreamCreated,
  type StreamSummary,
} from "./index.ts";

declare const client: ReturnType<typeof createClient>;
type Schemas = components["schemas"];

// Error codes are the contract's union, and each subclass narrows `code` to its own.
expectTypeOf<ErrorCode>().toEqualTypeOf<Schemas["ErrorCode"]>();
expectTypeOf<ApiError["code"]>().toEqualTypeOf<Schemas["ErrorCode"] | undefined>();
expectTypeOf<ConcurrencyLimitError["code"]>().toEqualTypeOf<"concurrency_limit">();
expectTypeOf(errorFromBody).returns.toEqualTypeOf<ApiError>();
expectTypeOf<ApiError["headers"]>().toEqualTypeOf<Headers>();
expectTypeOf<ApiError["requestId"]>().toEqualTypeOf<string | undefined>();

// Methods resolve with the generated response schemas.
expectTypeOf(client.streams.create).returns.resolves.toEqualTypeOf<StreamCreated>();
expectTypeOf<StreamCreated>().toEqualTypeOf<Schemas["StreamCreated"]>();
expectTypeOf(client.streams.get).returns.resolves.toEqualTypeOf<Schemas["StreamDetail"]>();
expectTypeOf(client.streams.end).returns.resolves.toEqualTypeOf<Schemas["StreamEnded"]>();
expectTypeOf(client.streams.list).returns.resolves.toEqualTypeOf<Schemas["StreamList"]>();
expectTypeOf<StreamSummary>().toEqualTypeOf<Schemas["StreamSummary"]>();
expectTypeOf(client.analytics.get).returns.resolves.toEqualTypeOf<Schemas["Analytics"]>();
expectTypeOf(client.webhooks.create).returns.resolves.toEqualTypeOf<Schemas["WebhookRegistered"]>();
expectTypeOf(client.webhooks.list).returns.resolves.toEqualTypeOf<Schemas["WebhookList"]>();
expectTypeOf(client.webhooks.delete).returns.resolves.toEqualTypeOf<Schemas["WebhookDeleted"]>();
expectTypeOf(client.creators.list).returns.resolves.toEqualTypeOf<Schemas["CreatorList"]>();
expectTypeOf(client.discovery).returns.resolves.toEqualTypeOf<Schemas["Discovery"]>();
expectTypeOf(client.streams.listAll).returns.toEqualTypeOf<AsyncGenerator<Schemas["StreamSummary"], void, undefined>>();
expectTypeOf(verifyWebhook).returns.toEqualTypeOf<Schemas["WebhookEvent"]>();
expectTypeOf(verifyWebhookAsync).returns.resolves.toEqualTypeOf<Schemas["WebhookEvent"]>();
expectTypeOf(verifyWebhookAsync).parameters.toEqualTypeOf<Parameters<typeof verifyWebhook>>();
// One secret, or several during a rotation (any array of strings, e.g. from split(",")).
expectTypeOf(verifyWebhook).parameter(2).toEqualTypeOf<string | readonly string[]>();
// @ts-expect-error secrets are strings
void verifyWebhookAsync("{}", "t=1,v1=00", [Buffer.from("whsec_x")]);

// onRetry is told why it waits, in a closed set of reasons.
expectTypeOf<RetryEvent["reason"]>().toEqualTypeOf<
  "rate_limited" | "db_error" | "network" | "idempotency_key_in_use"
>();
void createClient({
  baseUrl: "http://localhost:8080/api/v1",
  retry: { maxRateLimitWaitMs: 30_000, onRetry: ({ attempt, delayMs, reason }) => void [attempt, delayMs, reason] },
});
void client.streams.end("id", { idempotencyKey: "end-1" });

// Request bodies and queries are checked against the contract.
// @ts-expect-error platform is an enum
void client.streams.create({ creator_id: "avt_x", product_name: "p", platform: "myspace" });
// @ts-expect-error product_name is required
void client.streams.create({ creator_id: "avt_x", platform: "kick" });
// @ts-expect-error period is an enum
void client.analytics.get({ period: "1y" });
// @ts-expect-error events are the three event types
void client.webhooks.create({ url: "https://x.example.com", events: ["stream.paused"] });
