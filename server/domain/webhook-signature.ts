// Deliveries are signed by the SDK's webhookDeliveryHeaders (sdk/webhooks.ts), the one signing
// code the service and the CLI share: `t=<unix_seconds>,v1=<hex>`, each attempt with its own `t`.

/** Attempt n (1-based) failed: when the next one is due, or null after the last. */
export function nextAttemptDelay(attempt: number, scheduleMs: readonly number[]): number | null {
  return scheduleMs[attempt - 1] ?? null;
}
