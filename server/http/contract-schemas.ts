import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { contractDocument } from "./contract.ts";

const BASE = "contract";
let ajv: Ajv2020 | undefined;

/**
 * A validator for one of the contract's component schemas (`#/components/schemas/<name>`),
 * compiled once per process, for an answer the route writes out itself rather than through
 * `res.json` (which the contract validator checks). Formats are checked as the validator checks
 * them (its `validateFormats: true` is ajv-formats' fast mode).
 */
export function componentValidator(name: string): ValidateFunction {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: false });
    addFormatsModule.default(ajv, { mode: "fast" });
    ajv.addSchema({ $id: BASE, components: { schemas: contractDocument().components.schemas } });
  }
  const validate = ajv.getSchema(`${BASE}#/components/schemas/${name}`);
  if (!validate) throw new Error(`openapi.yaml has no schema components.schemas.${name}`);
  return validate;
}
