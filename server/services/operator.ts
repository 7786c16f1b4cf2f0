import { randomUUID } from "node:crypto";
import { generateApiKey, hashApiKey, keyHint } from "../domain/keys.ts";
import { defaultPlanMinutes } from "../domain/plans.ts";
import { ApiError } from "../domain/errors.ts";
import {
  ALL_SCOPES,
  type ApiKeyRecord,
  type Brand,
  type Mode,
  type Plan,
  type Scope,
  type Vertical,
  type WebhookDelivery,
} from "../domain/types.ts";
import { lockBrand } from "../store/brand-lock.ts";
import { countBrands, findBrand, insertBrand, listBrands, updateBrand } from "../store/brands.ts";
import type { Database, Queryable } from "../store/database.ts";
import { findDelivery, listDeliveries, sendDeliveryAgain } from "../store/deliveries.ts";
import { brandCaps } from "../../generated/limits.ts";
import { lockBrandForCreation, refuseKeyOverCap } from "./brand-caps.ts";
import { findActiveKeyNamed, insertKey, listKeys, revokeKey, revokeKeyByHash } from "../store/keys.ts";
import { changingKeys } from "../store/request-windows.ts";
import type { OnCreated } from "./context.ts";

export interface BrandInput {
  name: string;
  vertical: Vertical;
  plan: Plan;
  credits_cents?: number;
  plan_minutes?: number;
  rate_limit_per_minute?: number;
  max_active_streams?: number;
}

export type BrandPatch = Partial<Omit<BrandInput, "name" | "vertical">>;

export async function createBrand(db: Queryable, input: BrandInput, now: Date): Promise<Brand> {
  return insertBrand(db, {
    id: randomUUID(),
    name: input.name,
    vertical: input.vertical,
    plan: input.plan,
    creditsCents: input.credits_cents ?? 0,
    creditsHeldCents: 0,
    planMinutes: input.plan_minutes ?? defaultPlanMinutes(input.plan),
    minutesUsed: 0,
    rateLimitPerMinute: input.rate_limit_per_minute ?? 100,
    maxActiveStreams: input.max_active_streams ?? 3,
    createdAt: now,
  });
}

export async function getBrand(db: Queryable, id: string): Promise<Brand> {
  const brand = await findBrand(db, id);
  if (!brand) throw new ApiError("not_found", `No brand with id ${id}.`);
  return brand;
}

export async function patchBrand(db: Database, id: string, patch: BrandPatch): Promise<Brand> {
  return changingKeys(db, () =>
    db.transaction(async (tx) => {
      const brand = await lockBrand(tx, id);
      if (!brand) throw new ApiError("not_found", `No brand with id ${id}.`);
      if (patch.credits_cents !== undefined && patch.credits_cents < brand.creditsHeldCents) {
        throw new ApiError(
          "invalid_fields",
          `credits_cents cannot go below the ${brand.creditsHeldCents} cents held by active streams.`,
        );
      }
      return updateBrand(tx, {
        ...brand,
        plan: patch.plan ?? brand.plan,
        creditsCents: patch.credits_cents ?? brand.creditsCents,
        planMinutes: patch.plan_minutes ?? brand.planMinutes,
        rateLimitPerMinute: patch.rate_limit_per_minute ?? brand.rateLimitPerMinute,
        maxActiveStreams: patch.max_active_streams ?? brand.maxActiveStreams,
      });
    }),
  );
}

export interface KeyInput {
  brand_id: string;
  name: string;
  environment: Mode;
  scopes: Scope[];
  expires_at?: string | null;
}

/**
 * Returns the full key: the only time it exists outside the caller's hands. `onCreated` runs in
 * the transaction that stores the key (the dashboard's audit entry commits with it).
 */
export async function createKey(
  db: Database,
  input: KeyInput,
  now: Date,
  { onCreated }: { onCreated?: OnCreated } = {},
): Promise<{ record: ApiKeyRecord; key: string }> {
  return db.transaction(async (tx) => {
    await lockBrandForCreation(tx, input.brand_id);
    await refuseKeyOverCap(tx, input.brand_id, now);
    const key = generateApiKey(input.environment);
    const record = await insertKey(
      tx,
      {
        id: randomUUID(),
        brandId: input.brand_id,
        name: input.name,
        environment: input.environment,
        scopes: [...new Set(input.scopes)],
        lastFour: key.slice(-4),
        createdAt: now,
        expiresAt: input.expires_at ? new Date(input.expires_at) : null,
        revokedAt: null,
      },
      hashApiKey(key),
    );
    if (!record) {
      // A name tells keys apart only if it is one key's: the partial unique index refused it.
      const holder = await findActiveKeyNamed(tx, input.brand_id, input.environment, input.name);
      const hint = holder ? keyHint(holder.environment, holder.lastFour) : null;
      throw new ApiError(
        "key_name_taken",
        `A ${input.environment} key named "${input.name}" already exists${hint ? ` (${hint})` : ""}; choose another name or revoke that key first.`,
      );
    }
    await onCreated?.(tx, record.id);
    return { record, key };
  });
}

export async function revoke(db: Database, keyId: string, now: Date): Promise<void> {
  if (!(await changingKeys(db, () => revokeKey(db, keyId, now))))
    throw new ApiError("not_found", `No key with id ${keyId}.`);
}

/** Revokes a key given the key itself (a leaked one); returns its id. Only the hash is compared. */
export async function revokeByKey(db: Database, key: string, now: Date): Promise<string> {
  const keyId = await changingKeys(db, () => revokeKeyByHash(db, hashApiKey(key), now));
  if (keyId === null) throw new ApiError("not_found", "No key matches the key sent.");
  return keyId;
}

export function brands(db: Queryable): Promise<Brand[]> {
  return listBrands(db);
}

/** A brand's deliveries, newest first, for the operator (read-only). */
export function deliveriesOf(
  db: Queryable,
  filter: { brandId: string; webhookId?: string; status?: string },
): Promise<WebhookDelivery[]> {
  return listDeliveries(db, filter);
}

/** A brand's keys (of one environment, when given), bounded as the contract's key lists are (store/keys.ts). */
export async function keysOf(db: Queryable, brandId: string, now: Date, environment?: Mode): Promise<ApiKeyRecord[]> {
  await getBrand(db, brandId);
  return listKeys(db, brandId, { limit: brandCaps.keys, now, ...(environment ? { environment } : {}) });
}

/** Sends a failed delivery again, a new series of attempts (see sendDeliveryAgain); says why when it cannot. */
export async function retryDelivery(db: Database, deliveryId: string, now: Date): Promise<WebhookDelivery> {
  return db.transaction(async (tx) => {
    const retried = await sendDeliveryAgain(
      tx,
      { deliveryId, statuses: ["failed"] },
      { trigger: "operator", requestedBy: "operator", requestId: randomUUID() },
      now,
    );
    if (retried) return retried;
    const found = await findDelivery(tx, deliveryId);
    if (!found) throw new ApiError("not_found", `No delivery with id ${deliveryId}.`);
    if (found.webhookDeleted)
      throw new ApiError(
        "invalid_fields",
        `The webhook ${found.delivery.webhookId} of this delivery was deleted; there is nothing to send to.`,
      );
    throw new ApiError(
      "invalid_fields",
      `Only a failed delivery can be retried; this one is ${found.delivery.status}.`,
    );
  });
}

/**
 * On the first start of an empty embedded database: a demo brand with an all-scopes test key, so
 * a newcomer can call the API at once. Returns the key to print, or null when brands exist.
 */
export async function seedDemoBrand(db: Database, now: Date): Promise<{ brand: Brand; key: string } | null> {
  if ((await countBrands(db)) > 0) return null;
  const brand = await db.transaction((tx) =>
    createBrand(tx, { name: "Demo Brand", vertical: "live-commerce", plan: "growth", credits_cents: 100_000 }, now),
  );
  const { key } = await createKey(
    db,
    { brand_id: brand.id, name: "Demo test key", environment: "test", scopes: [...ALL_SCOPES] },
    now,
  );
  return { brand, key };
}
