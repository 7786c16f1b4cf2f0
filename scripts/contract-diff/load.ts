import { bundle, createConfig } from "@redocly/openapi-core";

export interface Contract {
  file: string;
  version: string;
  /** The bundled document: every $ref local (#/components/…), operator API removed. */
  doc: Record<string, any>;
}

/**
 * Reads a contract as partners get it: Redocly bundles it (external $refs pulled in) with the
 * `remove-x-internal` decorator, as `npm run docs` publishes it, so the operator API (x-internal)
 * is not compared. A document Redocly cannot resolve stops the check.
 */
export async function loadContract(file: string): Promise<Contract> {
  const config = await createConfig({ decorators: { "remove-x-internal": "on" } } as Parameters<typeof createConfig>[0]);
  const { bundle: document, problems } = await bundle({ ref: file, config });
  const errors = problems.filter((problem) => problem.severity === "error");
  if (errors.length) throw new Error(`${file}: ${errors.map((problem) => problem.message).join("; ")}`);
  const doc = document.parsed as Record<string, any> | null;
  const version = doc?.info?.version;
  if (!doc || typeof version !== "string") throw new Error(`${file}: not an OpenAPI document with info.version`);
  return { file, version, doc };
}
