import express, { type RequestHandler, Router } from "express";
import { ApiError } from "../../domain/errors.ts";
import { boundedBody } from "../body-limit.ts";
import { type ProviderWebhooks, WebhookRejected } from "../../providers/agent-provider.ts";
import type { ServiceContext } from "../../services/context.ts";
import { applyProviderEvent } from "../../services/provider-rooms.ts";

/** Where the provider named `name` sends its notifications. */
export const providerWebhookPath = (name: string) => `/providers/${name}/webhook`;

/** Provider notifications are small; this leaves room for any participant metadata. */
const BODY_LIMIT_BYTES = 256 * 1024;

/**
 * POST /providers/{name}/webhook: the agent provider's signed notifications (LiveKit's webhooks).
 * Outside /api/v1 and outside the contract: the caller is the provider, the body is its format and
 * the signature its own. Mounted before the contract edge, because the signature covers the raw
 * body exactly as received. Anything that does not verify is 401 and changes nothing; an
 * authentic notification is applied once (a repeated event id is acknowledged and ignored).
 */
/** Mount at providerWebhookPath(webhooks.name). */
export function providerWebhookRoutes(
  ctx: ServiceContext,
  webhooks: ProviderWebhooks,
  { requestId }: { requestId: RequestHandler },
): Router {
  const router = Router({ caseSensitive: true, strict: true });
  // Any content type: LiveKit sends application/webhook+json. Over the limit, refused at once.
  const rawBody = boundedBody(express.raw({ type: () => true, limit: BODY_LIMIT_BYTES }), BODY_LIMIT_BYTES);

  router.post("/", requestId, rawBody, async (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body.toString("utf8") : "";
    let event;
    try {
      event = await webhooks.receive(body, req.headers.authorization);
    } catch (error) {
      if (error instanceof WebhookRejected)
        throw new ApiError(
          "unauthorized",
          "The notification's signature did not verify: it must be signed with this server's provider API key and secret, unexpired, over this exact body.",
        );
      throw error;
    }
    if (event) await applyProviderEvent(ctx, event);
    res.set("Cache-Control", "no-store").status(204).end();
  });

  return router;
}
