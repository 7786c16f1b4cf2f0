import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
const { deliveries } = await client.webhooks.deliveries({ stream_id: process.env.STREAM_ID! });
for (const delivery of deliveries) {
  console.log(
    delivery.event_type,
    delivery.url,
    delivery.status,
    delivery.response_status ?? delivery.error ?? "not sent yet",
  );
}
console.log(`${deliveries.length} deliveries`);
