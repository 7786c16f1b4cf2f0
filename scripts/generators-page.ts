/**
 * docs/generators.md as the checks read it: its blocks marked `check=generators` (run as written
 * by `npm run check:generators`) and `check=postman` (read by `npm run check:postman`), and the
 * versions its install commands pin. The page is the one place the versions are named.
 */
import { join } from "node:path";
import { type CodeBlock, codeBlocks, JAVASCRIPT, ROOT, SHELL, TYPESCRIPT } from "./markdown-code-blocks.ts";

export const GENERATORS_PAGE = join(ROOT, "docs", "generators.md");
export const README = join(ROOT, "README.md");

/** What a reader of the page replaces: the local server's origin and the test key. */
export const PLACEHOLDER_ORIGIN = "http://localhost:8080";
export const PLACEHOLDER_KEY = "svc_test_…";

const runnable = (block: CodeBlock) =>
  SHELL.has(block.lang) || TYPESCRIPT.has(block.lang) || JAVASCRIPT.has(block.lang);

/**
 * The page's blocks that `check` runs or reads, in page order. Fails when a shell, TypeScript or
 * JavaScript block of the page is marked for neither check, so none goes unchecked.
 */
export function pageBlocks(check: "generators" | "postman"): CodeBlock[] {
  const blocks = codeBlocks(GENERATORS_PAGE).filter(runnable);
  const unmarked = blocks.filter((block) => !["generators", "postman"].includes(block.attributes.check ?? ""));
  if (unmarked.length)
    throw new Error(
      `${unmarked.map((block) => block.where).join(", ")}: mark each block check=generators or check=postman`,
    );
  return blocks.filter((block) => block.attributes.check === check);
}

/** README.md's tsconfig.json block: the settings partners are told to use. */
export function readmeTsconfig(): string {
  const block = codeBlocks(README).find((candidate) => candidate.attributes.file === "tsconfig.json");
  if (!block) throw new Error("README.md has no tsconfig.json block (```json file=tsconfig.json)");
  return block.code;
}

/** A shell block's commands: continuation lines joined, comments and blank lines dropped. */
export function commands(block: CodeBlock): string[] {
  return block.code
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((line) => line.replace(/(^|\s)#.*$/, "").trim())
    .filter(Boolean);
}

/** `name@version` as the page writes a pin (a scoped name keeps its leading `@`). */
const PIN = /^(@?[a-z0-9][\w.-]*(?:\/[\w.-]+)?)@(\S+)$/;
const EXACT = /^\d+\.\d+\.\d+$/;

/**
 * The packages the `npm install` commands of `blocks` install, by name, with their versions.
 * Throws unless each is an exact version and no package is named twice on the whole page.
 */
export function pins(blocks: CodeBlock[]): Record<string, string> {
  const everywhere = new Map<string, string[]>();
  for (const block of codeBlocks(GENERATORS_PAGE).filter((candidate) => SHELL.has(candidate.lang)))
    for (const command of commands(block))
      for (const word of command.split(/\s+/)) {
        const match = PIN.exec(word);
        if (match) everywhere.set(match[1]!, [...(everywhere.get(match[1]!) ?? []), `${block.where}: ${word}`]);
      }
  const twice = [...everywhere.values()].filter((places) => places.length > 1);
  if (twice.length) throw new Error(`a package is named more than once on the page: ${twice.flat().join("; ")}`);

  const found: Record<string, string> = {};
  for (const block of blocks.filter((candidate) => SHELL.has(candidate.lang)))
    for (const command of commands(block)) {
      if (!/^npm (install|i)\s/.test(command)) continue;
      for (const word of command.split(/\s+/).slice(2)) {
        if (word.startsWith("-")) continue;
        const match = PIN.exec(word);
        if (!match || !EXACT.test(match[2]!))
          throw new Error(`${block.where}: "${word}" is not pinned to an exact version (name@1.2.3)`);
        found[match[1]!] = match[2]!;
      }
    }
  return found;
}

/** The block's text with the reader's placeholders filled in. */
export function fillIn(code: string, { origin, key }: { origin: string; key: string }): string {
  return code.replaceAll(PLACEHOLDER_ORIGIN, origin).replaceAll(PLACEHOLDER_KEY, key);
}

/** The environment a partner's terminal has: this process's, without npm's script variables or the sandbox's secrets. */
export function partnerEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || /^npm_(package|lifecycle)_/.test(name)) continue;
    if (["npm_config_local_prefix", "INIT_CWD", "ADMIN_TOKEN", "DATABASE_URL"].includes(name)) continue;
    env[name] = value;
  }
  // npm run puts this repository's node_modules/.bin on the PATH; a partner's shell has none of it.
  const path = (env.PATH ?? "")
    .split(":")
    .filter((dir) => !dir.endsWith("/node_modules/.bin"))
    .join(":");
  return { ...env, PATH: path, NO_COLOR: "1", ...extra };
}
