// The main entry, for Node: everything in web.ts plus the node:crypto webhook helpers.
export * from "./web.ts";
export {
  computeSignature,
  DELIVERY_USER_AGENT,
  signWebhookPayload,
  verifyWebhook,
  webhookDeliveryHeaders,
} from "./webhooks.ts";
