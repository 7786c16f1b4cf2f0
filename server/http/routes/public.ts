import { promisify } from "node:util";
import { brotliCompress, gzip, constants as zlibConstants } from "node:zlib";
import { type NextFunction, type Request, type Response, Router } from "express";
import { creatorCatalogue } from "../../services/creators.ts";
import type { Queryable } from "../../store/database.ts";
import type { OperationIndex } from "../../../contract/operations.ts";
import type { OperationHandlers } from "../dispatch.ts";
import { creatorSummary } from "../response-bodies.ts";
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
  const compressed = compressedOnce();
  const send = (file: "html" | "yaml", type: string) => async (req: Request, res: Response, next: NextFunction) => {
    try {
      const served = docs();
      const body = served?.[file];
      if (served === undefined || body === undefined) {
        res.status(404).json({ error: { code: "not_found", message: "The docs are not built; run npm run build." } });
        return;
      }
      // The dashboard's headers: the page's CSP (its own inline scripts only), never framed.
      setPageSecurityHeaders(res, served.csp);
      res.vary("Accept-Encoding");
      const encoding = req.acceptsEncodings("br", "gzip", "identity");
      if (encoding === "br" || encoding === "gzip") {
        res.setHeader("Content-Encoding", encoding);
        res.type(type).send(await compressed(file, body, encoding));
        return;
      }
      res.type(type).send(body);
    } catch (error) {
      next(error);
    }
  };
  router.get("/", send("html", "html"));
  router.get("/openapi.yaml", send("yaml", "application/yaml"));
  return router;
}

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * The docs compressed once per text and encoding, off the event loop (the page is 2.7 MB, mostly
 * its inlined renderer: 0.6 MB as brotli, 0.7 MB as gzip). Brotli quality 9: a second of CPU once,
 * against 8 s at 11 for 10 % less.
 */
function compressedOnce(): (file: string, text: string, encoding: "br" | "gzip") => Promise<Buffer> {
  // By file: each file's text is read once (servedDocs) and never changes after.
  const made = new Map<string, Promise<Buffer>>();
  return (file, text, encoding) => {
    const key = `${file} ${encoding}`;
    let bytes = made.get(key);
    if (!bytes) {
      bytes =
        encoding === "br"
          ? brotli(text, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9 } })
          : gzipped(text, { level: 9 });
      // A failure is not kept: the next request tries again.
      bytes.catch(() => made.delete(key));
      made.set(key, bytes);
    }
    return bytes;
  };
}
