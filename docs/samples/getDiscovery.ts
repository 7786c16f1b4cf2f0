import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({ baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL! });
const discovery = await client.discovery();
console.log(discovery.version, discovery.status, Object.keys(discovery.endpoints));
