import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
const analytics = await client.analytics.get({ period: "7d" });
console.log(analytics.total_streams, analytics.total_minutes, analytics.live_now, analytics.by_platform);
