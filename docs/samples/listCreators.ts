import { createClient } from "@live-stream-hosting/sdk";

const client = createClient({ baseUrl: process.env.LIVE_STREAM_HOSTING_BASE_URL! });
const { creators } = await client.creators.list();
for (const creator of creators) console.log(creator.id, creator.name, creator.languages.join(","));
