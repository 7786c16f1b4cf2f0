import { ADMIN_BASE } from "../contract/operations.ts";

/**
 * The operator API (the `x-internal` paths served under /admin/v1; the dashboard's API, also
 * `x-internal`, is the web app's and stays out) as a document of its own, with its
 * `/admin/v1` server at the top level and no per-path `servers`. Client generators (hey-api,
 * orval, Postman) ignore per-path `servers` and would send operator calls to `/api/v1`; with one
 * document per base URL each generated client gets the right one. Components are not filtered
 * here: `redocly bundle --remove-unused-components` drops the ones no operator path uses.
 */
type Json = Record<string, any>;

/** Deep copy without any `x-internal` key: in this document everything is internal. */
function withoutInternalFlags(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutInternalFlags);
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== "x-internal")
      .map(([key, value]) => [key, withoutInternalFlags(value)]),
  );
}

export function operatorContract(contract: Json): Json {
  const servedAsOperator = (item: Json) =>
    (item.servers ?? []).some((server: Json) => String(server.url).includes(ADMIN_BASE));
  const internalPaths = Object.entries<Json>(contract.paths).filter(
    ([, item]) => item["x-internal"] === true && servedAsOperator(item),
  );
  const serverUrls = new Set(
    internalPaths.flatMap(([, item]) => (item.servers ?? []).map((server: Json) => server.url as string)),
  );
  if (internalPaths.length === 0 || serverUrls.size !== 1) {
    throw new Error(
      `expected every x-internal path to name one and the same server; found ${[...serverUrls].join(", ") || "none"}`,
    );
  }
  const [server] = internalPaths.map(([, item]) => item.servers[0] as Json);
  const usedTags = new Set(
    internalPaths.flatMap(([, item]) => Object.values<Json>(item).flatMap((operation) => operation?.tags ?? [])),
  );
  const operatorTags = (contract.tags ?? []).filter(
    (tag: Json) => tag["x-internal"] === true && usedTags.has(tag.name),
  );
  const usedSchemes = new Set(
    internalPaths.flatMap(([, item]) =>
      Object.values<Json>(item).flatMap((operation) => (operation?.security ?? []).flatMap(Object.keys)),
    ),
  );
  const securitySchemes = Object.fromEntries(
    Object.entries<Json>(contract.components.securitySchemes).filter(
      ([name, scheme]) => scheme["x-internal"] === true && usedSchemes.has(name),
    ),
  );

  return withoutInternalFlags({
    openapi: contract.openapi,
    info: {
      ...contract.info,
      title: `${contract.info.title}: operator API`,
      summary: "Create brands and API keys, adjust plans and credits, and read webhook deliveries.",
      description: operatorTags.map((tag: Json) => tag.description).join("\n"),
    },
    servers: [server],
    security: Object.keys(securitySchemes).map((name) => ({ [name]: [] })),
    tags: operatorTags,
    paths: Object.fromEntries(internalPaths.map(([path, { servers: _servers, ...item }]) => [path, item])),
    components: { ...contract.components, securitySchemes },
  }) as Json;
}
