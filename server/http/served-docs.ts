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

export function rewriteServers(html: string, contract: string, server: ServedServer): ServedDocs {
  const built = (parseYamlText(contract) as { servers?: unknown[] }).servers;
  const servers = [server];
  const builtJson = `"servers":${JSON.stringify(built)}`;
  const yamlBlock = /^servers:\n(?:[ -].*\n)+/m;
  if (!built || !html.includes(builtJson) || !yamlBlock.test(contract)) {
    throw new Error("The built docs do not list their servers as expected; rebuild them with npm run build.");
  }
  return {
    html: html.replace(builtJson, `"servers":${JSON.stringify(servers)}`),
    yaml: contract.replace(yamlBlock, toYamlText({ servers })),
  };
}
