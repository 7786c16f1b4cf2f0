import { createClient, NotFoundError } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
try {
  const stream = await client.streams.get(process.env.STREAM_ID!);
  console.log(stream.status, stream.viewer_count, stream.started_at);
} catch (error) {
  if (error instanceof NotFoundError) console.log("No such stream in this brand and mode.");
  else throw error;
}
