import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** The options path-to-regexp 8 reads for a regexp (and `strict`, which the validator passes). */
const OPTION_NAMES = new Set(["sensitive", "strict", "end", "trailing", "delimiter"]);

/** A key for the options, cheaper than JSON; undefined (not remembered) for options it does not know. */
function optionsKey(options: unknown): string | undefined {
  if (options === undefined || options === null) return "\u0000";
  if (typeof options !== "object") return undefined;
  let key = "";
  for (const [name, value] of Object.entries(options)) {
    if (!OPTION_NAMES.has(name) || (value !== undefined && typeof value !== "boolean" && typeof value !== "string")) return undefined;
    key += `${name}=${String(value)};`;
  }
  return `${key}\u0000`;
}

type PathToRegexp = ((path: unknown, options?: unknown) => unknown) & { compiledOnce?: true };

/** Route patterns remembered at most; the contract has a few dozen. */
const MAX_PATTERNS = 1_000;

/** What the adapter has seen: calls from the validator, and compilations actually made. */
const counts = { lookups: 0, compilations: 0 };

/**
 * express-openapi-validator 5.6 finds a request's operation by compiling every route pattern of
 * the contract with path-to-regexp, on every request, until one matches (its `lookupRoute`):
 * about a tenth of a request's CPU. The result depends only on the pattern and the options, and
 * its regexps carry no state (no `g` or `y` flag), so each is compiled once and remembered. The
 * module is the validator's own (resolved from its package), patched once per process.
 *
 * This relies on the validator calling `pathToRegexp` through its module's export at request
 * time; validator-route-cache.test.ts fails if an upgrade changes that (the patch would then do
 * nothing, silently), so the adapter is re-checked, or dropped, on each upgrade.
 */
export function compileRoutePatternsOnce(): void {
  const validatorEntry = fileURLToPath(import.meta.resolve("express-openapi-validator"));
  const pathToRegexpModule = createRequire(validatorEntry)("path-to-regexp") as { pathToRegexp: PathToRegexp };
  const compile = pathToRegexpModule.pathToRegexp;
  if (compile.compiledOnce) return;
  const compiled = new Map<string, unknown>();
  const compileOnce: PathToRegexp = (path, options) => {
    counts.lookups += 1;
    const settings = optionsKey(options);
    const key = typeof path === "string" && settings !== undefined ? `${settings}${path}` : undefined;
    const known = key === undefined ? undefined : compiled.get(key);
    if (known !== undefined) return known;
    counts.compilations += 1;
    const regexp = compile(path, options);
    if (key !== undefined && compiled.size < MAX_PATTERNS) compiled.set(key, regexp);
    return regexp;
  };
  compileOnce.compiledOnce = true;
  pathToRegexpModule.pathToRegexp = compileOnce;
}

/** For the adapter's test: how often the validator asked for a pattern, and how often one was compiled. */
export function routePatternCounts(): Readonly<typeof counts> {
  return { ...counts };
}
