import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
// The time test mode runs on (a test key): the real time plus every advance so far.
const clock = await client.testClock.get();
console.log(`test clock: ${clock.now}, ${clock.offset_seconds} s ahead of real time`);
