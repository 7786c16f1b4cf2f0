import type { Operation } from "./operations.ts";
import type { Target } from "./targets.ts";
import type { Tenant } from "./tenant.ts";

/** Sends an operation's requests once, in order, as the load generator would; throws on an answer that is not 2xx. */
export async function sendOnce(target: Target, tenant: Tenant, operation: Operation): Promise<void> {
  const context: Record<string, unknown> = {};
  for (const template of operation.requests(target, tenant)) {
    const request = (template.setupRequest ? template.setupRequest(template, context) : template) ?? template;
    const response = await fetch(`${target.url}${request.path}`, {
      method: request.method,
      headers: request.headers as Record<string, string>,
      body: request.body as string | undefined,
    });
    const body = await response.text();
    if (!response.ok) throw new Error(`${request.method} ${request.path} answered ${response.status}: ${body}`);
    template.onResponse?.(response.status, body, context);
  }
}
