/**
 * The one place that reads OpenAPI documents from their source, with Redocly's openapi-core
 * (1.x, the line openapi-typescript reads with; the Redocly CLI that lints and builds the docs
 * bundles its own 2.x, so the two are not claimed to read alike): the mock, the conformance
 * suite, the scripts and the build read a contract through it.
 * Each file is read once per process and view, and what is read is frozen (indexed.ts). A
 * development tool: the server reads the contract the build wrote (built.ts), not this.
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { bundle, type Config, createConfig, loadConfig, type NormalizedProblem } from "@redocly/openapi-core";
import { CONTRACT_FILE } from "./files.ts";
import { deepFreeze, type Json } from "./indexed.ts";

export { CONTRACT_FILE } from "./files.ts";
export type { Json } from "./indexed.ts";
export { parseYamlText, toYamlText } from "./yaml.ts";

/** The Redocly configuration `npm run lint`, `npm run docs` and `npm run generate` use. */
export const REDOCLY_CONFIG_FILE = fileURLToPath(new URL("../redocly.yaml", import.meta.url));

/**
 * - `bundled`: as written, every `$ref` local (`#/components/…`); for publishing.
 * - `published`: bundled without what is marked `x-internal` (the operator API), as partners get it.
 * - `dereferenced`: every `$ref` replaced by what it names; for schema compilers and for readers
 *   that walk the document.
 */
export type ContractView = "bundled" | "published" | "dereferenced";

const read = new Map<string, Promise<Json>>();

/** `file` in `view` (see ContractView), frozen; a file Redocly cannot read or resolve is refused with every problem named. */
export function readContract(file: string = CONTRACT_FILE, view: ContractView = "bundled"): Promise<Json> {
  const path = resolve(file);
  const key = `${view}\u0000${path}`;
  let reading = read.get(key);
  if (!reading) {
    reading = bundleView(path, view);
    // A failed read is not remembered: the file may be fixed and read again in the same process.
    reading.catch(() => read.delete(key));
    read.set(key, reading);
  }
  return reading;
}

async function bundleView(file: string, view: ContractView): Promise<Json> {
  const config = await createConfig(
    (view === "published" ? { decorators: { "remove-x-internal": "on" } } : {}) as Parameters<typeof createConfig>[0],
  );
  let result: Awaited<ReturnType<typeof bundle>>;
  try {
    result = await bundle({ ref: file, config, dereference: view === "dereferenced" });
  } catch (error) {
    // YAML syntax errors and unreadable files; their messages name the place.
    throw new Error(`${file}: cannot read the contract: ${(error as Error).message}`, { cause: error });
  }
  const errors = result.problems.filter((problem) => problem.severity === "error");
  if (errors.length) throw new Error(`${file}: ${errors.map(describeProblem).join("; ")}`);
  const document = result.bundle.parsed as unknown;
  if (typeof document !== "object" || document === null || typeof (document as Json).openapi !== "string") {
    throw new Error(`${file}: not an OpenAPI document (no openapi version at the top)`);
  }
  return deepFreeze(document as Json);
}

/** `Can't resolve $ref at #/paths/~1streams/get/responses/200` */
function describeProblem(problem: NormalizedProblem): string {
  const pointer = problem.location[0]?.pointer;
  return pointer ? `${problem.message} at ${pointer}` : problem.message;
}

/** redocly.yaml, for tools that take Redocly's configuration (openapi-typescript). */
export function loadRedoclyConfig(): Promise<Config> {
  return loadConfig({ configPath: REDOCLY_CONFIG_FILE });
}
