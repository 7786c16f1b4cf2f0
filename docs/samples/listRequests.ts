import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
// The key's mode's requests, newest first; refusals only (status "4xx").
const { requests, has_more } = await client.requests.list({ status: "4xx", limit: 20 });
for (const entry of requests) {
  console.log(entry.created_at, entry.status, entry.method, entry.path, entry.request_id, entry.error_code ?? "");
}
console.log(`${requests.length} requests${has_more ? "; older ones with starting_after" : ""}`);
