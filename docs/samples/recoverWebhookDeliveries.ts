import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
// Once the receiver is fixed: every delivery that failed in the last two hours, sent again.
const since = new Date(Date.now() - 2 * 60 * 60 * 1000).toISOString();
let queued = 0;
for (let more = true; more; ) {
  const answer = await client.webhooks.recover({ webhook_id: process.env.WEBHOOK_ID!, since });
  queued += answer.queued;
  more = answer.has_more;
}
console.log(`${queued} failed deliveries queued to be sent again`);
