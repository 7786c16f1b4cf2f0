/**
 * Operator CLI, a thin client of the operator API (/admin/v1).
 *   npm run admin -- brands create --name "Acme" --vertical igaming --plan growth [--credits-cents 50000]
 *   npm run admin -- brands get <brand_id>
 *   npm run admin -- brands update <brand_id> [--plan enterprise] [--credits-cents N] [--plan-minutes N]
 *                                             [--rate-limit-per-minute N] [--max-active-streams N]
 *   npm run admin -- keys create --brand <brand_id> --name "CI" --environment test --scopes streams:read,streams:write
 *                                [--expires-at 2027-01-01T00:00:00.000Z]
 *   npm run admin -- keys revoke <key_id>
 *   npm run admin -- deliveries --brand <brand_id> [--webhook <webhook_id>] [--status failed]
 * Needs ADMIN_TOKEN, and ADMIN_URL unless the server runs on http://localhost:$PORT.
 */
import { parseArgs } from "node:util";
import { ConfigError, loadCliConfig } from "../config.ts";

const INTEGER_FLAGS = ["credits-cents", "plan-minutes", "rate-limit-per-minute", "max-active-streams"] as const;

function usage(): never {
  console.error("usage: npm run admin -- (brands create|brands get|brands update|keys create|keys revoke|deliveries) …  (see server/cli/admin.ts)");
  process.exit(2);
}

function integers(values: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const flag of INTEGER_FLAGS) {
    const raw = values[flag];
    if (raw === undefined) continue;
    if (!/^\d+$/.test(String(raw))) throw new ConfigError(`--${flag} must be a whole number`);
    out[flag.replace(/-/g, "_")] = Number(raw);
  }
  return out;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: "string" },
      vertical: { type: "string" },
      plan: { type: "string" },
      brand: { type: "string" },
      environment: { type: "string" },
      scopes: { type: "string" },
      "expires-at": { type: "string" },
      webhook: { type: "string" },
      status: { type: "string" },
      ...Object.fromEntries(INTEGER_FLAGS.map((flag) => [flag, { type: "string" as const }])),
    },
  });
  const { adminUrl, adminToken } = loadCliConfig();
  const [resource, action, id] = positionals;
  let method = "GET";
  let path: string;
  let body: unknown;

  if (resource === "brands" && action === "create") {
    method = "POST";
    path = "/brands";
    body = { name: values.name, vertical: values.vertical, plan: values.plan, ...integers(values) };
  } else if (resource === "brands" && action === "get" && id) {
    path = `/brands/${id}`;
  } else if (resource === "brands" && action === "update" && id) {
    method = "PATCH";
    path = `/brands/${id}`;
    body = { ...(values.plan ? { plan: values.plan } : {}), ...integers(values) };
  } else if (resource === "keys" && action === "create") {
    method = "POST";
    path = "/keys";
    body = {
      brand_id: values.brand,
      name: values.name,
      environment: values.environment,
      scopes: values.scopes?.split(",").map((scope) => scope.trim()),
      ...(values["expires-at"] ? { expires_at: values["expires-at"] } : {}),
    };
  } else if (resource === "keys" && action === "revoke" && id) {
    method = "DELETE";
    path = `/keys/${id}`;
  } else if (resource === "deliveries") {
    const query = new URLSearchParams({ brand_id: values.brand ?? "" });
    if (values.webhook) query.set("webhook_id", values.webhook);
    if (values.status) query.set("status", values.status);
    path = `/webhook-deliveries?${query}`;
  } else {
    usage();
  }

  const response = await fetch(adminUrl + path, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  console.log(text ? JSON.stringify(JSON.parse(text), null, 2) : `HTTP ${response.status}`);
  if (!response.ok) process.exit(1);
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : `admin: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
