import { existsSync, readFileSync } from "node:fs";
import { parseYamlText, toYamlText } from "../../contract/yaml.ts";
import { docsCsp } from "./page-security.ts";

/** The server a served contract names: this deployment's API base and what it is. */
export interface ServedServer {
  /** e.g. `https://api.example.com/api/v1`. */
  url: string;
  description: string;
}

export interface ServedDocs {
  html: string;
  yaml: string;
  /** The page's Content-Security-Policy, naming its inline scripts as served (page-security.ts). */
  csp: string;
}

/**
 * The built docs page and public contract with their `servers` replaced by `server`. The built
 * contract names the local defaults (localhost:8080 and the mock on 4010); the page is built
 * naming the first alone, in its embedded JSON and in its pre-rendered markup, so that it names
 * this server before any script has run. Both are rewritten once, on first use (the docs may be
 * built after the app is created), and a build whose servers cannot be found fails loudly rather
 * than serving the wrong host.
 */
export function servedDocs(docsDir: string, server: ServedServer): () => ServedDocs | undefined {
  let served: ServedDocs | undefined;
  return () => {
    if (served) return served;
    const htmlPath = `${docsDir}/index.html`;
    const yamlPath = `${docsDir}/openapi.yaml`;
    if (!existsSync(htmlPath) || !existsSync(yamlPath)) return undefined;
    const rewritten = rewriteServers(readFileSync(htmlPath, "utf8"), readFileSync(yamlPath, "utf8"), server);
    served = { ...rewritten, csp: docsCsp(rewritten.html) };
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
  if (!SERVERS_BLOCK.test(contract))
    throw new Error("The built docs do not list their servers as expected; rebuild them with npm run docs.");
  return contract.replace(SERVERS_BLOCK, toYamlText({ servers: servedServers(server) }));
}

/** Text as React renders it into markup. */
function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#x27;");
}

/** JSON for a `<script>`: no `</script>` can end it early. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

/** The first of a parsed document's `servers`, all its fields, when it has a URL and a description. */
function firstServer(document: unknown): (ServedServer & Readonly<Record<string, unknown>>) | undefined {
  if (!isObject(document) || !Array.isArray(document.servers)) return undefined;
  const [server] = document.servers;
  if (!isObject(server)) return undefined;
  const { url, description } = server;
  return typeof url === "string" && typeof description === "string" ? { ...server, url, description } : undefined;
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null;

export function rewriteServers(html: string, contract: string, server: ServedServer): Omit<ServedDocs, "csp"> {
  const pageServer = firstServer(parseYamlText(contract));
  const builtJson = `"servers":${JSON.stringify([pageServer])}`;
  // The element texts of the pre-rendered server panel: the URL, then the description.
  const shown = (text: string) => `>${escapeHtml(text)}<`;
  if (!pageServer || !html.includes(builtJson) || !html.includes(shown(pageServer.url))) {
    throw new Error("The built docs do not list their servers as expected; rebuild them with npm run build.");
  }
  return {
    html: html
      .replace(builtJson, `"servers":${scriptJson(servedServers(server))}`)
      .replaceAll(shown(pageServer.url), shown(server.url))
      .replaceAll(shown(pageServer.description), shown(server.description)),
    yaml: servedContract(contract, server),
  };
}
