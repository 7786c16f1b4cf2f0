/**
 * The contract as the server reads it at run time. `npm run build` reads openapi.yaml through
 * Redocly (contract.ts) and writes its dereferenced view to build/contract/server.json; the server parses
 * that JSON at start-up: no Redocly (a development dependency), no YAML, no references to resolve.
 * The file records a digest of the openapi.yaml it was made from, so a server started after the
 * contract changed, without a rebuild, stops with the fix rather than serve the old contract.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { BUILT_CONTRACT_FILE, CONTRACT_FILE } from "./files.ts";
import { type Contract, deepFreeze, indexContract, type Json } from "./indexed.ts";

interface BuiltContract {
  /** sha256 of the openapi.yaml it was made from. */
  source: string;
  dereferenced: Json;
}

/** The built contract is missing, unreadable or made from another openapi.yaml: `npm run build` fixes it. */
export class ContractBuildError extends Error {
  override name = "ContractBuildError";
}

function sha256(content: string | Buffer): string {
  return createHash("sha256").update(content).digest("hex");
}

/** The file `npm run build` writes: `contract`, read from a file of this content (openapi.yaml's). */
export function builtContractText(contract: Contract, source: string | Buffer): string {
  const built: BuiltContract = {
    source: sha256(source),
    dereferenced: contract.dereferenced,
  };
  return `${JSON.stringify(built)}\n`;
}

const loaded = new Map<string, Contract>();

/**
 * The contract in `file`, read and indexed once per process. Refused with a ContractBuildError
 * when the file is missing or unreadable, or when `source` exists and is not what it was built from
 * (a production install may leave openapi.yaml out; then the build is taken as it is).
 */
export function loadBuiltContract(file: string = BUILT_CONTRACT_FILE, source: string = CONTRACT_FILE): Contract {
  const cached = loaded.get(file);
  if (cached) return cached;
  const fix = "Fix: run npm run build (npm ci runs it too).";
  if (!existsSync(file))
    throw new ContractBuildError(
      `${file} is missing: the server reads the contract the build makes from openapi.yaml. ${fix}`,
    );
  let built: BuiltContract;
  try {
    built = JSON.parse(readFileSync(file, "utf8")) as BuiltContract;
  } catch (error) {
    throw new ContractBuildError(`${file} cannot be read (${(error as Error).message}). ${fix}`, { cause: error });
  }
  if (typeof built?.source !== "string" || typeof built.dereferenced !== "object" || built.dereferenced === null) {
    throw new ContractBuildError(`${file} is not a built contract. ${fix}`);
  }
  if (existsSync(source) && sha256(readFileSync(source)) !== built.source) {
    throw new ContractBuildError(`${file} was built from another ${source} than the one there now. ${fix}`);
  }
  const contract = indexContract(file, deepFreeze(built.dereferenced));
  loaded.set(file, contract);
  return contract;
}
