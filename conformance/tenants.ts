/**
 * Brands and keys made through the operator API (/admin/v1), the same way an operator would, so
 * provisioning works on the in-process server and on any deployment given ADMIN_TOKEN.
 */
import { type AdminClient, adminClient, createBrand, createKey, revokeKey } from "../server/cli/admin-client.ts";
import { type components, scopeValues } from "../generated/api.ts";
import type { Bases, Send } from "./client.ts";

type Schemas = components["schemas"];

export const ALL_SCOPES = scopeValues;
export type Scope = Schemas["Scope"];
export type Environment = Schemas["KeyCreate"]["environment"];
export type BrandSettings = Partial<Omit<Schemas["BrandCreate"], "name">>;

export interface Tenant {
  brandId: string;
  key(options?: {
    environment?: Environment;
    scopes?: readonly Scope[];
    expiresAt?: string;
  }): Promise<{ key: string; keyId: string }>;
  revoke(keyId: string): Promise<void>;
}

/**
 * The typed admin client, its requests going out through the suite's `send`: each answer is
 * checked against the contract and recorded (coverage, the scenario's exchanges) like any other.
 */
export function operatorClient(send: Send, { admin, adminToken }: Bases): AdminClient {
  if (!admin || !adminToken) throw new Error("this target has no operator API (set ADMIN_TOKEN for a URL target)");
  const prefix = new URL(admin).pathname.replace(/\/+$/, "");
  return adminClient(admin, adminToken, async (request) => {
    const url = new URL(request.url);
    const body = await request.text();
    const answer = await send({
      method: request.method,
      path: url.pathname.slice(prefix.length) + url.search,
      internal: true,
      ...(body === "" ? {} : { rawBody: body }),
    });
    return new Response(answer.text === "" ? null : answer.text, { status: answer.status, headers: answer.headers });
  });
}

/**
 * Conformance brands get limits high enough that a property run never meets them; scenarios
 * about the limits ask for the spec's defaults (or 0) explicitly.
 */
export const ROOMY: BrandSettings = {
  plan: "growth",
  credits_cents: 100_000_000,
  rate_limit_per_minute: 1_000_000,
  max_active_streams: 100_000,
};

let brandCount = 0;
let keyCount = 0;

export async function createTenant(operator: AdminClient, settings: BrandSettings = {}): Promise<Tenant> {
  const { brand_id: brandId } = await createBrand(operator, {
    name: `Conformance brand ${++brandCount}`,
    vertical: "live-commerce",
    plan: "growth",
    ...ROOMY,
    ...settings,
  });
  return {
    brandId,
    async key({ environment = "test", scopes = ALL_SCOPES, expiresAt } = {}) {
      const created = await createKey(operator, {
        brand_id: brandId,
        // A brand's active keys of a mode have distinct names.
        name: `conformance ${++keyCount}`,
        environment,
        scopes: [...scopes],
        ...(expiresAt ? { expires_at: expiresAt } : {}),
      });
      return { key: created.key, keyId: created.key_id };
    },
    revoke: (keyId) => revokeKey(operator, keyId),
  };
}
