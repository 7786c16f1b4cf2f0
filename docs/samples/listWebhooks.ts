import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
const { webhooks } = await client.webhooks.list();
for (const webhook of webhooks) console.log(webhook.webhook_id, webhook.url, webhook.events.join(","), webhook.active);
