/**
 * A contract document made ready for code: frozen, its operations indexed (operations.ts) and
 * its limits read (limits.ts). Shared by the two ways a process gets one: from openapi.yaml
 * through Redocly (contract.ts, for the tools, which also keep the document as written) and
 * from the build (built.ts, for the server and the mock).
 */
import { readLimits, type ContractLimits } from "./limits.ts";
import { indexOperations, type OperationIndex } from "./operations.ts";

export type Json = Record<string, any>;

export interface Contract {
  /** The file it was read from. */
  readonly file: string;
  /** `info.version`. */
  readonly version: string;
  /** Every `$ref` replaced by what it names; frozen. */
  readonly dereferenced: Json;
  readonly operations: OperationIndex;
  readonly limits: ContractLimits;
}

/** The contract of `file` from its dereferenced view; anything the code expects and does not find is refused, naming the file. */
export function indexContract(file: string, dereferenced: Json): Contract {
  try {
    const version = dereferenced.info?.version;
    if (typeof version !== "string") throw new Error("info.version is not a string");
    const operations = indexOperations(dereferenced);
    return { file, version, dereferenced, operations, limits: readLimits(operations) };
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Every reader in a process shares what was read: frozen, so none can change it for the others.
 * `seen`: a node reached twice (a dereferenced document may share one) is frozen once.
 */
export function deepFreeze<T>(node: T, seen = new Set<unknown>()): T {
  if (typeof node !== "object" || node === null || seen.has(node)) return node;
  seen.add(node);
  for (const value of Object.values(node)) deepFreeze(value, seen);
  return Object.freeze(node);
}
