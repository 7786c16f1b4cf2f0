import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!, // a test key
});
// Reconnects by itself and resumes after the last event; this stops after 5 seconds.
const events = client.webhooks.listen({
  events: ["stream.started", "stream.ended"],
  signal: AbortSignal.timeout(5_000),
  onConnect: () => console.log("listening for test-mode events"),
});
for await (const event of events) {
  // event.body is the delivery body, byte for byte as a webhook receives it.
  console.log(event.type, event.id, JSON.parse(event.body).data.stream_id);
}
