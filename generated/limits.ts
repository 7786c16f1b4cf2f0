// Generated from openapi.yaml by `npm run generate` (scripts/generate-limits.ts). Do not edit.

/** GET /streams `limit`: its default and the range applied. */
export const pageSize = {"min":1,"max":100,"default":20} as const;

/** GET /streams `offset`: its default and the least applied. */
export const offset = {"min":0,"default":0} as const;

/** POST /streams `duration_minutes`: the planned length's range. */
export const durationMinutes = {"min":1,"max":480} as const;

/** GET /analytics `period`: the values and the default. */
export const periods = {"values":["24h","7d","30d"],"default":"7d"} as const;

/** The shape of an API key (KeyCreated `key`). */
export const apiKeyPattern = new RegExp("^svc_(live|test)_[0-9A-Za-z]{32}$");
