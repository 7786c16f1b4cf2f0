import type { RequestHandler } from "express";
import { sendBackup } from "../../backup/take.ts";
import { isUuid } from "../../domain/ids.ts";
import { ApiError } from "../../domain/errors.ts";
import type { Clock } from "../../services/context.ts";
import {
  brands,
  createBrand,
  deliveriesOf,
  createKey,
  getBrand,
  keysOf,
  patchBrand,
  retryDelivery,
  revoke,
  revokeByKey,
} from "../../services/operator.ts";
import type { Database } from "../../store/database.ts";
import type { OperationHandlers } from "../dispatch.ts";
import type { TokenChecker } from "../token-failures.ts";
import { brand, keyCreated, keySummary, webhookDelivery } from "../response-bodies.ts";

/**
 * The operator API (/admin/v1): off unless ADMIN_TOKEN is set, then `Bearer <ADMIN_TOKEN>`,
 * compared in constant time, guessing slowed per address (http/token-failures.ts). A disabled API
 * answers 404 so it does not reveal itself.
 */
export function operatorGuard(adminToken: string | undefined, checkToken?: TokenChecker): RequestHandler {
  if (adminToken && !checkToken) throw new Error("operatorGuard: an ADMIN_TOKEN needs a token checker (tokenChecker)");
  return function guardOperator(req, _res, next) {
    if (!adminToken || !checkToken) return next(new ApiError("not_found", "No such endpoint."));
    try {
      checkToken(req, adminToken, "Missing or invalid operator token.");
    } catch (error) {
      return next(error);
    }
    next();
  };
}

export function operatorHandlers(deps: {
  db: Database;
  clock: Clock;
}): OperationHandlers<
  | "adminListBrands"
  | "adminCreateBrand"
  | "adminGetBrand"
  | "adminUpdateBrand"
  | "adminListKeys"
  | "adminRevokeKeyBySecret"
  | "adminCreateKey"
  | "adminRevokeKey"
  | "adminListWebhookDeliveries"
  | "adminRetryWebhookDelivery"
  | "adminBackup"
> {
  const { db, clock } = deps;
  return {
    async adminListBrands(_req, res) {
      res.json({ brands: (await brands(db)).map(brand) });
    },

    async adminCreateBrand(req, res) {
      res.status(201).json(brand(await db.transaction((tx) => createBrand(tx, req.body, clock()))));
    },

    async adminGetBrand(req, res) {
      const id = req.params.brand_id;
      if (!isUuid(id)) throw new ApiError("not_found", `No brand with id ${id}.`);
      res.json(brand(await getBrand(db, id)));
    },

    async adminUpdateBrand(req, res) {
      const id = req.params.brand_id;
      if (!isUuid(id)) throw new ApiError("not_found", `No brand with id ${id}.`);
      res.json(brand(await patchBrand(db, id, req.body)));
    },

    async adminListKeys(req, res) {
      res.json({ keys: (await keysOf(db, req.query.brand_id, clock())).map(keySummary) });
    },

    async adminRevokeKeyBySecret(req, res) {
      const keyId = await revokeByKey(db, req.body.key, clock());
      res.json({ key_id: keyId, revoked: true });
    },

    async adminCreateKey(req, res) {
      const { record, key } = await createKey(db, req.body, clock());
      res.status(201).json(keyCreated(record, key));
    },

    async adminRevokeKey(req, res) {
      const id = req.params.key_id;
      if (!isUuid(id)) throw new ApiError("not_found", `No key with id ${id}.`);
      await revoke(db, id, clock());
      res.json({ key_id: id, revoked: true });
    },

    async adminListWebhookDeliveries(req, res) {
      const query = req.query;
      const deliveries = await deliveriesOf(db, {
        brandId: query.brand_id,
        webhookId: query.webhook_id,
        status: query.status,
      });
      res.json({ deliveries: deliveries.map(webhookDelivery) });
    },

    async adminRetryWebhookDelivery(req, res) {
      const id = req.params.delivery_id;
      if (!isUuid(id)) throw new ApiError("not_found", `No delivery with id ${id}.`);
      res.json(webhookDelivery(await retryDelivery(db, id, clock())));
    },

    async adminBackup(_req, res) {
      await sendBackup(db, res, clock());
    },
  };
}
