import type { Contract } from "../../contract/contract.ts";
import { compileSchema, type ValidateFunction } from "../../contract/schemas.ts";

/**
 * A validator for one of the contract's component schemas (`#/components/schemas/<name>`), for an
 * answer the route writes out itself rather than through `res.json` (which the contract validator
 * checks): the streamed answers, item by item. Compiled by the one schema compiler, as answers are
 * (contract/schemas.ts), once per process however many apps are made.
 */
export function componentValidator(contract: Contract, name: string): ValidateFunction {
  const schema = contract.dereferenced.components?.schemas?.[name];
  if (!schema) throw new Error(`${contract.file} has no schema components.schemas.${name}`);
  return compileSchema(schema);
}
