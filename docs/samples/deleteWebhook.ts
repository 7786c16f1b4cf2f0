import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
const deleted = await client.webhooks.delete(process.env.WEBHOOK_ID!);
console.log(deleted.webhook_id, deleted.deleted); // true even for an unknown id: safe to retry
