import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
const webhook = await client.webhooks.create({
  url: "https://hooks.example.com/live-stream",
  events: ["stream.started", "stream.ended", "stream.error"],
});
console.log(webhook.webhook_id, webhook.secret); // store the secret now: it is never shown again
