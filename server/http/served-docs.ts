import { existsSync, readFileSync } from "node:fs";
import { parseYamlText, toYamlText } from "../../contract/yaml.ts";

/** The server a served contract names: this deployment's API base and what it is. */
export interface ServedServer {
  /** e.g. `https://api.example.com/api/v1`. */
  url: string;
  description: string;
}

export interface ServedDocs {
  html: string;
  yaml: string;
}

/**
 * The built docs page and public contract with their `servers` replaced by `server`. The build
 * names the local defaults (localhost:8080 and the mock on 4010); the page embeds the same list as
 * JSON. Both are rewritten once, on first use (the docs may be built after the app is created),
 * and a build whose servers cannot be found fails loudly rather than serving the wrong host.
 */
export function servedDocs(docsDir: string, server: ServedServer): () => ServedDocs | undefined {
  let served: ServedDocs | undefined;
  return () => {
    if (served) return served;
    const htmlPath = `${docsDir}/index.html`;
    const yamlPath = `${docsDir}/openapi.yaml`;
    if (!existsSync(htmlPath) || !existsSync(yamlPath)) return undefined;
    served = rewriteServers(readFileSync(htmlPath, "utf8"), readFileSync(yamlPath, "utf8"), server);
    return served;
  };
}

/** How a running server describes itself as the served contract's one server. */
export const THIS_SERVER = "This server";

const SERVERS_BLOCK = /^servers:\n(?:[ -].*\n)+/m;

/** The `servers` a served contract names: `server` alone, declared public (OWASP API9, inventory). */
function servedServers(server: ServedServer) {
  return [{ ...server, "x-internal": false }];
}

/** The built public contract (YAML text) as served: its `servers` replaced by `server`. */
export function servedContract(contract: string, server: ServedServer): string {
  if (!SERVERS_BLOCK.test(contract)) throw new Error("The built docs do not list their servers as expected; rebuild them with npm run docs.");
  return contract.replace(SERVERS_BLOCK, toYamlText({ servers: servedServers(server) }));
}

export function rewriteServers(html: string, contract: string, server: ServedServer): ServedDocs {
  const built = (parseYamlText(contract) as { servers?: unknown[] }).servers;
  const builtJson = `"servers":${JSON.stringify(built)}`;
  if (!built || !html.includes(builtJson)) {
    throw new Error("The built docs do not list their servers as expected; rebuild them with npm run build.");
  }
  return {
    html: html.replace(builtJson, `"servers":${JSON.stringify(servedServers(server))}`),
    yaml: servedContract(contract, server),
  };
}
