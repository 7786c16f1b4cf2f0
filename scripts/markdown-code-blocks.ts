/**
 * The fenced code blocks of the project's Markdown (README.md, sdk/README.md, docs/*.md), for
 * docs/code-blocks.test.ts, which runs them. A block's info string is its language, then
 * attributes that say how it runs:
 *
 * - `skip="why"`: not run; the test prints the reason (a block that needs Docker, say).
 * - `env=sandbox` / `env=mock` (shell): run against a sandbox server / the mock, the reader's
 *   placeholders filled in (the key `npm start` printed, the local URLs).
 * - `run=sandbox` (TypeScript): compiled, then run with node against a sandbox server.
 * - `file=NAME`: written into the partner's project under NAME (a tsconfig.json, a .cjs config);
 *   not when the block is skipped (a sample that needs generated code: see `check=`).
 * - `expect=error`: the block shows an error answer (the mock's `Prefer`), which it must print.
 * - `check=generators` / `check=postman` (docs/generators.md): run or read by `npm run
 *   check:generators` / `npm run check:postman` (scripts/generators-page.ts), which download
 *   their tools; the skip reason of such a block says so.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface CodeBlock {
  /** e.g. `README.md:48` (the fence's line). */
  where: string;
  file: string;
  lang: string;
  attributes: Record<string, string>;
  /** The block's text, its fence's indentation removed. */
  code: string;
}

/** The Markdown whose blocks must run: the READMEs and every page of docs/. */
export function documentedFiles(root: string = ROOT): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => join(root, "docs", name));
  return [join(root, "README.md"), join(root, "sdk", "README.md"), ...docs];
}

/** `ts run=sandbox skip="needs Docker"` → `{ run: "sandbox", skip: "needs Docker" }`. */
export function parseAttributes(text: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const match of text.matchAll(/([\w-]+)=(?:"([^"]*)"|(\S+))/g)) attributes[match[1]!] = match[2] ?? match[3]!;
  return attributes;
}

export function codeBlocks(file: string, root: string = ROOT): CodeBlock[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})([\w+-]*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open;
    const end = lines.findIndex((line, j) => j > i && line.trim() === fence);
    if (end < 0) throw new Error(`${relative(root, file)}:${i + 1}: a code block is not closed`);
    const code = lines
      .slice(i + 1, end)
      .map((line) => (line.startsWith(indent!) ? line.slice(indent!.length) : line.trimStart()))
      .join("\n");
    blocks.push({
      where: `${relative(root, file)}:${i + 1}`,
      file,
      lang: lang!,
      attributes: parseAttributes(rest!),
      code: `${code}\n`,
    });
    i = end;
  }
  return blocks;
}

/** Languages run by the test; any other block is text (output, data, configuration) and is not run. */
export const SHELL = new Set(["sh", "bash", "shell"]);
export const TYPESCRIPT = new Set(["ts", "typescript"]);
export const JAVASCRIPT = new Set(["js", "javascript", "cjs", "mjs"]);
