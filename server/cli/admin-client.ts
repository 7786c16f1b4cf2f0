import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "../../generated/api.ts";
import { ALL_SCOPES } from "../domain/types.ts";

type Schemas = components["schemas"];

/** A typed client of the operator API (/admin/v1), from the contract's generated paths. */
export type AdminClient = Client<paths>;

/**
 * The one way our tools talk to the operator API: the CLI, the test harness, the conformance
 * suite, the benchmark and the partner sandbox's scripts. openapi-fetch never throws for an HTTP
 * failure; the helpers below do, for the tools that cannot go on without what they asked for.
 */
export function adminClient(
  adminBase: string,
  adminToken: string,
  fetch: (input: Request) => Promise<Response> = globalThis.fetch,
): AdminClient {
  return createClient<paths>({ baseUrl: adminBase, headers: { authorization: `Bearer ${adminToken}` }, fetch });
}

/** The body of the answer when its status is `expected`, or an error naming the call, the status and the answer. */
async function expect<T>(
  what: string,
  expected: number,
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (response.status !== expected || data === undefined)
    throw new Error(`${what} answered ${response.status}: ${JSON.stringify(error ?? data)}`);
  return data;
}

export function createBrand(client: AdminClient, brand: Schemas["BrandCreate"]): Promise<Schemas["Brand"]> {
  return expect("POST /admin/v1/brands", 201, client.POST("/brands", { body: brand }));
}

/** The answer carries the key itself, shown this once. */
export function createKey(client: AdminClient, key: Schemas["KeyCreate"]): Promise<Schemas["KeyCreated"]> {
  return expect("POST /admin/v1/keys", 201, client.POST("/keys", { body: key }));
}

/** A dashboard invitation; its `url` holds the one-time token. */
export function inviteMember(
  client: AdminClient,
  invitation: Schemas["AdminInvitationCreate"],
): Promise<Schemas["DashboardInvitationCreated"]> {
  return expect("POST /admin/v1/invitations", 201, client.POST("/invitations", { body: invitation }));
}

export async function revokeKey(client: AdminClient, keyId: string): Promise<void> {
  await expect(
    `DELETE /admin/v1/keys/${keyId}`,
    200,
    client.DELETE("/keys/{key_id}", { params: { path: { key_id: keyId } } }),
  );
}

/** A brand and one all-scopes key of it (test keys unless `environment` says otherwise), made through the operator API. */
export async function createTenant(
  client: AdminClient,
  brand: Schemas["BrandCreate"],
  {
    environment = "test",
    name = brand.name,
  }: { environment?: Schemas["KeyCreate"]["environment"]; name?: string } = {},
): Promise<{ brandId: string; key: string }> {
  const { brand_id } = await createBrand(client, brand);
  const { key } = await createKey(client, { brand_id, name, environment, scopes: [...ALL_SCOPES] });
  return { brandId: brand_id, key };
}
