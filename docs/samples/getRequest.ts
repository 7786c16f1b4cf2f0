import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({
  baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL!,
  apiKey: process.env.LIVE_STREAM_HOSTING_API_KEY!,
});
// REQUEST_ID: the Request-Id header of an answer.
const logged = await client.requests.retrieve(process.env.REQUEST_ID!);
const { request } = logged;
console.log(request.created_at, request.status, request.method, request.path, request.key_name);
console.log("request body:", logged.request_body ?? "(none)");
console.log("response body:", logged.response_body ?? "(none)");
