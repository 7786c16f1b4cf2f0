import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { Contract } from "../../contract/contract.ts";

let ajv: Ajv2020 | undefined;

/**
 * A validator for one of the contract's component schemas (`#/components/schemas/<name>`), for an
 * answer the route writes out itself rather than through `res.json` (which the contract validator
 * checks). Compiled from the dereferenced schema, which ajv remembers, so once per process
 * however many apps are made. Formats are checked as the validator checks them (its
 * `validateFormats: true` is ajv-formats' fast mode).
 */
export function componentValidator(contract: Contract, name: string): ValidateFunction {
  const schema = contract.dereferenced.components?.schemas?.[name];
  if (!schema) throw new Error(`${contract.file} has no schema components.schemas.${name}`);
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: false });
    addFormatsModule.default(ajv, { mode: "fast" });
  }
  return ajv.compile(schema);
}
