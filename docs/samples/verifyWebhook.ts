import { createServer } from "node:http";
import { verifyWebhook, WebhookVerificationError } from "@live-stream-hosting/sdk";

const secret = process.env.WEBHOOK_SECRET!; // whsec_…, returned once by webhooks.create()

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    try {
      // Verify the raw body exactly as received, before parsing it.
      const event = verifyWebhook(Buffer.concat(chunks), req.headers["x-service-signature"] as string | undefined, secret);
      console.log(`${event.type} ${event.id}: stream ${event.data.stream_id} is ${event.data.status}`);
      res.writeHead(204).end(); // deliveries can repeat: handle each event.id once
    } catch (error) {
      res.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
    }
  });
}).listen(Number(process.env.PORT ?? 3000));
