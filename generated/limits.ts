// Generated from openapi.yaml by `npm run generate` (scripts/generate-limits.ts). Do not edit.

/** GET /streams `limit`: its default and the range applied. */
export const pageSize = {"min":1,"max":100,"default":20} as const;

/** GET /streams `offset`: its default and the range applied. */
export const offset = {"min":0,"max":9007199254740991,"default":0} as const;

/** The longest error `message`; the server cuts longer ones. */
export const errorMessageMaxLength = 1000 as const;

/** The longest delivery `error` the operator API shows; longer ones are cut. */
export const deliveryErrorMaxLength = 1000 as const;

/** The longest receiver's answer a delivery's attempt shows; longer ones are cut. */
export const attemptResponseMaxLength = 1000 as const;

/** POST /streams `duration_minutes`: the planned length's range. */
export const durationMinutes = {"min":1,"max":480} as const;

/** GET /analytics `period`: the values and the default. */
export const periods = {"values":["24h","7d","30d"],"default":"7d"} as const;

/** The shape of an API key (KeyCreated `key`). */
export const apiKeyPattern = new RegExp("^svc_(live|test)_[0-9A-Za-z]{32}$");

/** The longest dashboard password, set or sent (every password field's maxLength). */
export const passwordMaxLength = 200 as const;

/** Webhooks one brand may have in one mode (WebhookList `webhooks` maxItems); POST /webhooks refuses more. */
export const webhooksPerBrand = 16 as const;

/** A brand's caps: usable API keys, open invitations, members (the maxItems of the lists showing them). */
export const brandCaps = {"keys":1000,"openInvitations":1000,"members":1000} as const;

/** A member's sessions in the dashboard: how many are listed, the longest User-Agent kept (DashboardSessionList). */
export const memberSessions = {"listed":100,"userAgentMaxLength":512} as const;

/** A stream's timeline in the dashboard: its most entries and deliveries (DashboardStreamTimeline). */
export const streamTimeline = {"entries":20,"deliveries":100} as const;
