import { fileURLToPath } from "node:url";

/** Where `npm run docs` writes, and where the server serves /docs and /docs/openapi.yaml from. */
export const DOCS_DIR = fileURLToPath(new URL("../build/docs/", import.meta.url));
export const DOCS_HTML = `${DOCS_DIR}index.html`;
export const DOCS_SPEC = `${DOCS_DIR}openapi.yaml`;
/**
 * The operator API as a document of its own, for client generators that ignore per-path `servers`.
 * Kept out of DOCS_DIR on purpose: nothing under build/contract/ is served.
 */
export const CONTRACT_DIR = fileURLToPath(new URL("../build/contract/", import.meta.url));
export const OPERATOR_SPEC = `${CONTRACT_DIR}operator.yaml`;
export const ROOT = fileURLToPath(new URL("../", import.meta.url));
