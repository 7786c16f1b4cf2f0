export * from "./client.ts";
export * from "./errors.ts";
export { paginate, type Page, type PaginateOptions } from "./pagination.ts";
export { withRetry, backoff, type FetchLike, type RetryOptions } from "./retry.ts";
export * from "./webhooks.ts";
