// The main entry, for Node: everything in web.ts plus the node:crypto webhook helpers.
export * from "./web.ts";
export { computeSignature, signWebhookPayload, verifyWebhook } from "./webhooks.ts";
