import { createClient, NotFoundError } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
try {
  const ended = await client.streams.end(process.env.STREAM_ID!);
  console.log(ended.status, ended.ended_at); // billing stopped at ended_at
} catch (error) {
  if (error instanceof NotFoundError) console.log("Not live (already ended, failed or still preparing), or not yours.");
  else throw error;
}
