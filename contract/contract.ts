/**
 * The contract as the tools read it: openapi.yaml (or any document) loaded through Redocly once
 * per process (contract/load.ts), its operations indexed and its limits read (indexed.ts). The
 * server reads the same, built once (contract/built.ts). Loading is asynchronous (Redocly's API
 * is), so a process awaits `loadContract()` at start-up and passes the result on; after that
 * every read is synchronous.
 */
import { type Contract, indexContract, type Json } from "./indexed.ts";
import { CONTRACT_FILE, readContract } from "./load.ts";

export type { Contract } from "./indexed.ts";

/** The contract as the tools read it from its source: also the document as written. */
export interface SourceContract extends Contract {
  /** As written, every `$ref` local (`#/components/…`); frozen. For publishing it (the docs). */
  readonly document: Json;
}

const loaded = new Map<string, Promise<SourceContract>>();

/** The contract in `file` (default: the repository's openapi.yaml), read and indexed once per process. */
export function loadContract(file: string = CONTRACT_FILE): Promise<SourceContract> {
  let loading = loaded.get(file);
  if (!loading) {
    loading = load(file);
    loading.catch(() => loaded.delete(file));
    loaded.set(file, loading);
  }
  return loading;
}

async function load(file: string): Promise<SourceContract> {
  const [document, dereferenced] = await Promise.all([
    readContract(file, "bundled"),
    readContract(file, "dereferenced"),
  ]);
  return { ...indexContract(file, dereferenced), document };
}
