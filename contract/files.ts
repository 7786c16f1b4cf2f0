import { fileURLToPath } from "node:url";

/** The repository's contract, the single source of truth. */
export const CONTRACT_FILE = fileURLToPath(new URL("../openapi.yaml", import.meta.url));

/** The contract as the server reads it at run time, written by `npm run build` (built.ts). */
export const BUILT_CONTRACT_FILE = fileURLToPath(new URL("../build/contract/server.json", import.meta.url));
