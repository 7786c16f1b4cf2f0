import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
// Two hours pass in test mode: the time-outs and scheduled ends due by then have happened when it
// answers, and the webhook attempts due by then (a failing receiver's retries) follow within seconds.
const clock = await client.testClock.advance(2 * 60 * 60);
console.log(`test clock: ${clock.now}, ${clock.offset_seconds} s ahead of real time`);
