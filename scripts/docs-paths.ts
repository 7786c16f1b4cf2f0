import { fileURLToPath } from "node:url";

/** Where `npm run docs` writes, and where the server serves /docs and /docs/openapi.yaml from. */
export const DOCS_DIR = fileURLToPath(new URL("../build/docs/", import.meta.url));
export const DOCS_HTML = `${DOCS_DIR}index.html`;
export const DOCS_SPEC = `${DOCS_DIR}openapi.yaml`;
export const ROOT = fileURLToPath(new URL("../", import.meta.url));
