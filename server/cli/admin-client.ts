import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "../../generated/api.ts";
import { ALL_SCOPES } from "../domain/types.ts";

type Schemas = components["schemas"];

/** A typed client of the operator API (/admin/v1), from the contract's generated paths. */
export type AdminClient = Client<paths>;

/**
 * The one way our tools talk to the operator API: the CLI, the benchmark and the partner
 * sandbox's scripts. openapi-fetch never throws for an HTTP failure; `created` below does, for
 * the tools that cannot go on without the brand or key they asked for.
 */
export function adminClient(adminBase: string, adminToken: string, fetch: (input: Request) => Promise<Response> = globalThis.fetch): AdminClient {
  return createClient<paths>({ baseUrl: adminBase, headers: { authorization: `Bearer ${adminToken}` }, fetch });
}

/** The body of a 201, or an error naming the call, the status and the answer. */
async function created<T>(what: string, call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.status !== 201 || data === undefined) throw new Error(`${what} answered ${response.status}: ${JSON.stringify(error ?? data)}`);
  return data;
}

/** A brand and one all-scopes key of it (test keys unless `environment` says otherwise), made through the operator API. */
export async function createTenant(
  client: AdminClient,
  brand: Schemas["BrandCreate"],
  { environment = "test", name = brand.name }: { environment?: Schemas["KeyCreate"]["environment"]; name?: string } = {},
): Promise<{ brandId: string; key: string }> {
  const { brand_id } = await created("POST /admin/v1/brands", client.POST("/brands", { body: brand }));
  const { key } = await created("POST /admin/v1/keys", client.POST("/keys", { body: { brand_id, name, environment, scopes: [...ALL_SCOPES] } }));
  return { brandId: brand_id, key };
}
