/**
 * Writes generated/query-defaults.ts: for each operation, the query parameters openapi.yaml gives
 * a `default`. Request validation fills those in, so a handler's query has them whether sent or
 * not (server/http/dispatch.ts `OperationRequest`); openapi-typescript types every parameter that
 * is not `required` as optional, as a client sends it. Part of `npm run generate`;
 * `npm run generate:check` fails when the committed file differs from what this would write.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadContract } from "../contract/contract.ts";
import type { OperationIndex } from "../contract/operations.ts";

export const QUERY_DEFAULTS_FILE = fileURLToPath(new URL("../generated/query-defaults.ts", import.meta.url));

export function renderQueryDefaults(operations: OperationIndex): string {
  const entries = operations.all.flatMap((operation) => {
    const names = operation.parameters
      .filter((parameter) => parameter.in === "query" && parameter.schema?.default !== undefined)
      .map((parameter) => JSON.stringify(String(parameter.name)));
    return names.length === 0 ? [] : [`  ${operation.operationId}: ${names.join(" | ")};`];
  });
  return [
    "// Generated from openapi.yaml by `npm run generate` (scripts/generate-query-defaults.ts). Do not edit.",
    "",
    "/** The query parameters with a `default` in openapi.yaml, by operationId: validation fills them in. */",
    "export interface QueryDefaults {",
    ...entries,
    "}",
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(QUERY_DEFAULTS_FILE, renderQueryDefaults((await loadContract()).operations), "utf8");
}
