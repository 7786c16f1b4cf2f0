/**
 * The contract as the tools read it: openapi.yaml (or any document) loaded through Redocly once
 * per process (contract/load.ts), its operations indexed and its limits read (indexed.ts). The
 * server reads the same, built once (contract/built.ts). Loading is asynchronous (Redocly's API
 * is), so a process awaits `loadContract()` at start-up and passes the result on; after that
 * every read is synchronous.
 */
import { type Contract, indexContract } from "./indexed.ts";
import { CONTRACT_FILE, readContract } from "./load.ts";

export type { Contract } from "./indexed.ts";

const loaded = new Map<string, Promise<Contract>>();

/** The contract in `file` (default: the repository's openapi.yaml), read and indexed once per process. */
export function loadContract(file: string = CONTRACT_FILE): Promise<Contract> {
  let loading = loaded.get(file);
  if (!loading) {
    loading = load(file);
    loading.catch(() => loaded.delete(file));
    loaded.set(file, loading);
  }
  return loading;
}

async function load(file: string): Promise<Contract> {
  const [document, dereferenced] = await Promise.all([
    readContract(file, "bundled"),
    readContract(file, "dereferenced"),
  ]);
  return indexContract(file, document, dereferenced);
}
