/**
 * The entry for runtimes without node:crypto (browsers' workers, Deno, Bun, edge runtimes):
 * everything in index.ts except the synchronous, node:crypto-based `verifyWebhook`,
 * `signWebhookPayload` and `computeSignature`. Nothing reachable from here imports a Node module.
 */
export * from "./client.ts";
export * from "./errors.ts";
export type { ListenedEvent, ListenOptions } from "./listen.ts";
export { paginate, type Page, type PaginateOptions } from "./pagination.ts";
export { withRetry, backoff, type FetchLike, type RetryEvent, type RetryOptions, type RetryReason } from "./retry.ts";
export * from "./webhook-public.ts";
export { signWebhookPayloadAsync, verifyWebhookAsync } from "./webhooks-async.ts";
