import { type RequestHandler, Router } from "express";
import { isUuid } from "../../domain/ids.ts";
import { bearerTokenMatches } from "../../domain/keys.ts";
import { ApiError } from "../../errors.ts";
import type { Clock } from "../../services/context.ts";
import {
  type BrandInput,
  type BrandPatch,
  createBrand,
  createKey,
  getBrand,
  type KeyInput,
  keysOf,
  patchBrand,
  retryDelivery,
  revoke,
  revokeByKey,
} from "../../services/operator.ts";
import { listBrands } from "../../store/brands.ts";
import type { Database } from "../../store/database.ts";
import { listDeliveries } from "../../store/deliveries.ts";
import { brand, keyCreated, keySummary } from "../presenters.ts";

/**
 * The operator API (/admin/v1): off unless ADMIN_TOKEN is set, then `Bearer <ADMIN_TOKEN>`,
 * compared in constant time. A disabled API answers 404 so it does not reveal itself.
 */
export function operatorGuard(adminToken: string | undefined): RequestHandler {
  return function guardOperator(req, _res, next) {
    if (!adminToken) return next(new ApiError("not_found", "No such endpoint."));
    if (!bearerTokenMatches(req.headers.authorization, adminToken)) return next(new ApiError("unauthorized", "Missing or invalid operator token."));
    next();
  };
}

export function operatorRoutes(deps: { db: Database; clock: Clock }): Router {
  const router = Router();
  const { db, clock } = deps;

  router.get("/brands", async (_req, res) => {
    res.json({ brands: (await listBrands(db)).map(brand) });
  });

  router.post("/brands", async (req, res) => {
    res.status(201).json(brand(await db.transaction((tx) => createBrand(tx, req.body as BrandInput, clock()))));
  });

  router.get("/brands/:brand_id", async (req, res) => {
    if (!isUuid(req.params.brand_id)) throw new ApiError("not_found", `No brand with id ${req.params.brand_id}.`);
    res.json(brand(await getBrand(db, req.params.brand_id)));
  });

  router.patch("/brands/:brand_id", async (req, res) => {
    if (!isUuid(req.params.brand_id)) throw new ApiError("not_found", `No brand with id ${req.params.brand_id}.`);
    res.json(brand(await patchBrand(db, req.params.brand_id, req.body as BrandPatch)));
  });

  router.get("/keys", async (req, res) => {
    const { brand_id } = req.query as { brand_id: string };
    res.json({ keys: (await keysOf(db, brand_id)).map(keySummary) });
  });

  router.post("/keys/revoke", async (req, res) => {
    const keyId = await revokeByKey(db, (req.body as { key: string }).key, clock());
    res.json({ key_id: keyId, revoked: true });
  });

  router.post("/keys", async (req, res) => {
    const { record, key } = await createKey(db, req.body as KeyInput, clock());
    res.status(201).json(keyCreated(record, key));
  });

  router.delete("/keys/:key_id", async (req, res) => {
    if (!isUuid(req.params.key_id)) throw new ApiError("not_found", `No key with id ${req.params.key_id}.`);
    await revoke(db, req.params.key_id, clock());
    res.json({ key_id: req.params.key_id, revoked: true });
  });

  router.get("/webhook-deliveries", async (req, res) => {
    const query = req.query as { brand_id: string; webhook_id?: string; status?: string };
    const deliveries = await listDeliveries(db, { brandId: query.brand_id, webhookId: query.webhook_id, status: query.status });
    res.json({ deliveries });
  });

  router.post("/webhook-deliveries/:delivery_id/retry", async (req, res) => {
    if (!isUuid(req.params.delivery_id)) throw new ApiError("not_found", `No delivery with id ${req.params.delivery_id}.`);
    res.json(await retryDelivery(db, req.params.delivery_id, clock()));
  });

  return router;
}
