/**
 * The second half of `npm run build` (after build-docs.ts): openapi.yaml read through Redocly, as
 * every tool reads it, written as build/contract/server.json, the contract the server reads at run
 * time (contract/built.ts). Written last, so a server never starts on half a build.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { builtContractText } from "../contract/built.ts";
import { loadContract } from "../contract/contract.ts";
import { BUILT_CONTRACT_FILE, CONTRACT_FILE } from "../contract/files.ts";

const contract = await loadContract(CONTRACT_FILE);
mkdirSync(dirname(BUILT_CONTRACT_FILE), { recursive: true });
writeFileSync(BUILT_CONTRACT_FILE, builtContractText(contract, readFileSync(CONTRACT_FILE)));
console.log(
  `contract: ${BUILT_CONTRACT_FILE} (${Math.round(statSync(BUILT_CONTRACT_FILE).size / 1024)} KiB), version ${contract.version}, ${contract.operations.all.length} operations`,
);
