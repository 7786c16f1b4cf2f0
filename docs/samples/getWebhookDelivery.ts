import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
const { delivery, attempts, payload } = await client.webhooks.retrieveDelivery(process.env.DELIVERY_ID!);
console.log(delivery.event_type, delivery.event_id, delivery.status);
for (const attempt of attempts) {
  const result = attempt.response_status ?? attempt.error;
  console.log(attempt.attempted_at, `attempt ${attempt.attempt}`, attempt.trigger, result, attempt.response_body ?? "");
}
console.log(`payload: ${payload}`);
