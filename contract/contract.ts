/**
 * The contract as code reads it: openapi.yaml loaded once per process (contract/load.ts), its
 * operations indexed once (contract/operations.ts) and its limits read once (contract/limits.ts).
 * Loading is asynchronous (Redocly's API is), so a process awaits `loadContract()` at start-up
 * and passes the result on; after that every read is synchronous.
 */
import { readLimits, type ContractLimits } from "./limits.ts";
import { CONTRACT_FILE, type Json, readContract } from "./load.ts";
import { indexOperations, type OperationIndex } from "./operations.ts";

export interface Contract {
  readonly file: string;
  /** `info.version`. */
  readonly version: string;
  /** As written, every `$ref` local (`#/components/…`); frozen. */
  readonly document: Json;
  /** Every `$ref` replaced by what it names; frozen. */
  readonly dereferenced: Json;
  readonly operations: OperationIndex;
  readonly limits: ContractLimits;
}

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
  const [document, dereferenced] = await Promise.all([readContract(file, "bundled"), readContract(file, "dereferenced")]);
  try {
    const version = document.info?.version;
    if (typeof version !== "string") throw new Error("info.version is not a string");
    const operations = indexOperations(dereferenced);
    return { file, version, document, dereferenced, operations, limits: readLimits(operations) };
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`, { cause: error });
  }
}
