/**
 * Brands and keys made through the operator API (/admin/v1), the same way an operator would, so
 * provisioning works on the in-process server and on any deployment given ADMIN_TOKEN.
 */
import type { Send } from "./client.ts";
import { scopeValues } from "../generated/api.ts";

export const ALL_SCOPES = scopeValues;
export type Scope = (typeof ALL_SCOPES)[number];
export type Environment = "test" | "live";

export interface BrandSettings {
  vertical?: "live-commerce" | "igaming";
  plan?: "free" | "starter" | "growth" | "enterprise";
  credits_cents?: number;
  plan_minutes?: number;
  rate_limit_per_minute?: number;
  max_active_streams?: number;
}

export interface Tenant {
  brandId: string;
  key(options?: { environment?: Environment; scopes?: readonly Scope[]; expiresAt?: string }): Promise<{ key: string; keyId: string }>;
  revoke(keyId: string): Promise<void>;
}

/**
 * Conformance brands get limits high enough that a property run never meets them; scenarios
 * about the limits ask for the spec's defaults (or 0) explicitly.
 */
export const ROOMY: BrandSettings = { plan: "growth", credits_cents: 100_000_000, rate_limit_per_minute: 1_000_000, max_active_streams: 100_000 };

let brandCount = 0;

export async function createTenant(send: Send, settings: BrandSettings = {}): Promise<Tenant> {
  const brand = await send({
    method: "POST",
    path: "/brands",
    internal: true,
    body: { name: `Conformance brand ${++brandCount}`, vertical: "live-commerce", ...ROOMY, ...settings },
  });
  if (brand.status !== 201) throw new Error(`creating a brand answered ${brand.status}: ${brand.text}`);
  const brandId = brand.body.brand_id as string;
  return {
    brandId,
    async key({ environment = "test", scopes = ALL_SCOPES, expiresAt } = {}) {
      const created = await send({
        method: "POST",
        path: "/keys",
        internal: true,
        body: { brand_id: brandId, name: "conformance", environment, scopes, ...(expiresAt ? { expires_at: expiresAt } : {}) },
      });
      if (created.status !== 201) throw new Error(`creating a key answered ${created.status}: ${created.text}`);
      return { key: created.body.key as string, keyId: created.body.key_id as string };
    },
    async revoke(keyId) {
      const revoked = await send({ method: "DELETE", path: `/keys/${keyId}`, internal: true });
      if (revoked.status !== 200) throw new Error(`revoking a key answered ${revoked.status}: ${revoked.text}`);
    },
  };
}
