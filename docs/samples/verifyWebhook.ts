import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { verifyWebhook, WebhookVerificationError } from "@live-stream-hosting/sdk";

// whsec_…, returned once by webhooks.create(). While you rotate it, both: "whsec_new,whsec_old".
const secrets = process.env.WEBHOOK_SECRET!.split(",");

// A delivery can arrive twice (a retry; one copy per webhook while you rotate a secret): handle
// each event id once. This file stands in for your database, so restarts remember.
const HANDLED = "handled-event-ids.txt";
const handled = new Set(existsSync(HANDLED) ? readFileSync(HANDLED, "utf8").split("\n") : []);

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    try {
      // Verify the raw body exactly as received, before parsing it.
      const event = verifyWebhook(
        Buffer.concat(chunks),
        req.headers["x-service-signature"] as string | undefined,
        secrets,
      );
      if (handled.has(event.id)) {
        console.log(`${event.type} ${event.id}: already handled`);
      } else {
        console.log(`${event.type} ${event.id}: stream ${event.data.stream_id} is ${event.data.status}`);
        appendFileSync(HANDLED, `${event.id}\n`);
        handled.add(event.id);
      }
      res.writeHead(204).end(); // a duplicate gets 2xx too, or it is sent again
    } catch (error) {
      res.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
    }
  });
}).listen(Number(process.env.PORT ?? 3000));
