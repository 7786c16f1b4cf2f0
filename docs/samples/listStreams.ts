import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
const page = await client.streams.list({ status: "live", limit: 20 });
console.log(`${page.streams.length} of ${page.total} live streams`);
for await (const stream of client.streams.listAll({ status: "ended" })) console.log(stream.id, stream.ended_at);
