/**
 * `live-stream-hosting deliveries list|show|retry` and `recover`: what became of the webhook
 * events of the key's mode, what the receiver answered, and sending the missed ones again once the
 * receiver is fixed. Test and live keys alike: nothing here starts a stream or bills.
 */
import type { Delivery, DeliveryDetail, LiveStreamClient } from "./client.ts";

export type DeliveriesCommand =
  | {
      action: "list";
      status?: "pending" | "succeeded" | "failed";
      webhookId?: string;
      streamId?: string;
      limit: number;
    }
  | { action: "show"; deliveryId: string }
  | { action: "retry"; deliveryId: string }
  | { action: "recover"; webhookId: string; since: Date };

/** Recover calls one command makes at most (10,000 deliveries each): a bound on a runaway loop. */
const RECOVER_CALLS = 100;

/** `2h`, `30m`, `7d`, `90s`: a duration back from now, in milliseconds; null when it is none. */
export function durationMs(text: string): number | null {
  const match = /^(\d+)\s*(s|m|h|d)$/.exec(text.trim());
  if (!match) return null;
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as "s" | "m" | "h" | "d"];
  return Number(match[1]) * unit;
}

/** `--since`: an ISO time, or a duration back from `now` (`2h`). Null when it is neither. */
export function sinceOf(text: string, now: Date): Date | null {
  const back = durationMs(text);
  if (back !== null) return new Date(now.getTime() - back);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return null;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? null : at;
}

function outcomeOf(delivery: Delivery): string {
  if (delivery.response_status !== null) return `HTTP ${delivery.response_status}`;
  return delivery.error ?? "no attempt yet";
}

function deliveryLine(delivery: Delivery): string {
  return [
    delivery.created_at,
    delivery.status.padEnd(9),
    `attempt ${delivery.attempt}`,
    delivery.event_type.padEnd(14),
    delivery.event_id,
    delivery.delivery_id,
    outcomeOf(delivery),
  ].join("  ");
}

function detailLines(detail: DeliveryDetail): string[] {
  const lines = [deliveryLine(detail.delivery), `  webhook ${detail.delivery.webhook_id} ${detail.delivery.url}`];
  if (detail.attempts.length === 0) lines.push("  no attempt yet");
  for (const attempt of detail.attempts) {
    const result =
      attempt.response_status === null ? (attempt.error ?? "no answer") : `HTTP ${attempt.response_status}`;
    const by =
      attempt.trigger === "schedule"
        ? ""
        : `, ${attempt.trigger}${attempt.requested_by ? ` by ${attempt.requested_by}` : ""}`;
    const duration = attempt.duration_ms === null ? "" : ` in ${attempt.duration_ms} ms`;
    lines.push(
      `  ${attempt.attempted_at}  series ${attempt.series} attempt ${attempt.attempt}${by}: ${result}${duration}`,
    );
    if (attempt.response_body) lines.push(`    answer: ${attempt.response_body.replace(/\s+/g, " ")}`);
  }
  lines.push(`  payload: ${detail.payload}`);
  return lines;
}

/** Runs one deliveries command, printing its result a line at a time. */
export async function runDeliveries(
  client: LiveStreamClient,
  command: DeliveriesCommand,
  io: { out(line: string): void },
): Promise<void> {
  switch (command.action) {
    case "list": {
      const page = await client.webhooks.deliveries({
        limit: command.limit,
        ...(command.status ? { status: command.status } : {}),
        ...(command.webhookId ? { webhook_id: command.webhookId } : {}),
        ...(command.streamId ? { stream_id: command.streamId } : {}),
      });
      for (const delivery of page.deliveries) io.out(deliveryLine(delivery));
      io.out(`${page.deliveries.length} of ${page.total} deliver${page.total === 1 ? "y" : "ies"}, newest first.`);
      return;
    }
    case "show":
      for (const line of detailLines(await client.webhooks.retrieveDelivery(command.deliveryId))) io.out(line);
      return;
    case "retry": {
      const delivery = await client.webhooks.retryDelivery(command.deliveryId);
      io.out(`Queued ${delivery.delivery_id} (${delivery.event_type} ${delivery.event_id}) to be sent again now.`);
      return;
    }
    case "recover": {
      let queued = 0;
      for (let call = 0; call < RECOVER_CALLS; call++) {
        const answer = await client.webhooks.recover({
          webhook_id: command.webhookId,
          since: command.since.toISOString(),
        });
        queued += answer.queued;
        if (!answer.has_more) break;
      }
      io.out(
        `Queued ${queued} failed deliver${queued === 1 ? "y" : "ies"} since ${command.since.toISOString()} to be sent again.`,
      );
      return;
    }
  }
}
