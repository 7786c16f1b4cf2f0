import { type Request, type Response, Router } from "express";
import { creatorCatalogue } from "../../services/creators.ts";
import type { Queryable } from "../../store/database.ts";
import type { OperationIndex } from "../../../contract/operations.ts";
import type { OperationHandlers } from "../dispatch.ts";
import { creatorSummary } from "../presenters.ts";
import { setPageSecurityHeaders } from "../page-security.ts";
import { type ServedServer, servedDocs } from "../served-docs.ts";

/** GET / (discovery, built from the contract so it lists exactly what is served) and GET /creators. */
export function publicHandlers(deps: {
  db: Queryable;
  publicBaseUrl: string;
  operations: OperationIndex;
  version: string;
}): OperationHandlers<"getDiscovery" | "listCreators"> {
  const endpoints = Object.fromEntries(
    deps.operations.all
      .filter((operation) => !operation.admin && !operation.dashboard)
      .map((operation) => [
        `${operation.method} ${operation.path}`,
        `${operation.summary.replace(/\.?$/, ".")} Scope: ${operation.scope ?? "none (no key needed)"}.`,
      ]),
  );
  const discovery = {
    name: "Live Stream Hosting API",
    version: "v1",
    status: "ok",
    docs: `${deps.publicBaseUrl}/docs`,
    openapi: `${deps.publicBaseUrl}/docs/openapi.yaml`,
    authentication:
      "Send Authorization: Bearer <API_KEY>. Keys begin svc_live_ (live, billed) or svc_test_ (test, free, simulated).",
    endpoints,
  };

  return {
    getDiscovery(_req, res) {
      res.json(discovery);
    },

    async listCreators(_req, res) {
      const creators = await creatorCatalogue(deps.db);
      res.setHeader("Cache-Control", "public, max-age=60");
      res.json({ creators: creators.map(creatorSummary) });
    },
  };
}

/**
 * /docs and /docs/openapi.yaml from the build (`npm run build`), mounted at /docs, naming
 * `server` as the contract's only server, so a generated client or a Postman import of the served
 * contract calls this deployment, not the local default the build names.
 */
export function docsRoutes(docsDir: string, server: ServedServer): Router {
  const router = Router();
  const docs = servedDocs(docsDir, server);
  const send = (file: "html" | "yaml", type: string) => (_req: Request, res: Response) => {
    const served = docs();
    const body = served?.[file];
    if (served === undefined || body === undefined) {
      res.status(404).json({ error: { code: "not_found", message: "The docs are not built; run npm run build." } });
      return;
    }
    // The dashboard's headers: the page's CSP (its own inline scripts only), never framed.
    setPageSecurityHeaders(res, served.csp);
    res.type(type).send(body);
  };
  router.get("/", send("html", "html"));
  router.get("/openapi.yaml", send("yaml", "application/yaml"));
  return router;
}
