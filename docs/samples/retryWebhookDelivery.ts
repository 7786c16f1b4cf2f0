import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
// Same event id and body, a fresh signature; sent with an Idempotency-Key, so a retry of this call sends once.
const delivery = await client.webhooks.retryDelivery(process.env.DELIVERY_ID!);
console.log(delivery.delivery_id, delivery.status, "due", delivery.next_attempt_at);
