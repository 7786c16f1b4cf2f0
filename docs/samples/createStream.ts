import { ConcurrencyLimitError, createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
try {
  const stream = await client.streams.create({
    creator_id: "avt_Qfmm3FkkaQM0",
    product_name: "Summer sneakers drop",
    platform: "youtube",
    duration_minutes: 30,
  });
  console.log(stream.stream_id, stream.status); // test keys: "live" at once; live keys: "preparing"
} catch (error) {
  if (error instanceof ConcurrencyLimitError) console.log("End a stream first: retrying does not help.");
  else throw error;
}
