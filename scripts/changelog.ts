/**
 * CHANGELOG.md (the contract's) and sdk/CHANGELOG.md: entries newest first, each headed
 * `## <version> — <YYYY-MM-DD>` (or `— Unreleased` before its release), with `### Added`,
 * `### Changed`, `### Removed` or `### Fixed` sections of `- ` items. `## <version>, revised — <date>`
 * records a revision made without a new version (before versions were checked). The release gate
 * (npm run contract:diff) reads them, and npm run docs renders the contract's into the docs page.
 */
import { valid } from "semver";

export const SECTIONS = ["Added", "Changed", "Removed", "Fixed"] as const;

export interface ChangelogEntry {
  version: string;
  /** `YYYY-MM-DD`, or null while unreleased. */
  date: string | null;
  revised: boolean;
  /** Items per section, in the order written. */
  sections: Map<string, string[]>;
  line: number;
}

const HEADING = /^## (\S+?)(, revised)? [—-] (\d{4}-\d{2}-\d{2}|Unreleased)\s*$/;

/** Entries in file order; a `## ` heading that is not an entry heading is an error. */
export function parseChangelog(text: string): ChangelogEntry[] {
  const entries: ChangelogEntry[] = [];
  let section: string[] | undefined;
  for (const [index, line] of text.split("\n").entries()) {
    if (line.startsWith("## ")) {
      const match = HEADING.exec(line);
      if (!match || !valid(match[1])) {
        throw new Error(`line ${index + 1}: "${line}" is not "## <MAJOR.MINOR.PATCH> — <YYYY-MM-DD or Unreleased>"`);
      }
      const date = match[3] === "Unreleased" ? null : match[3]!;
      entries.push({ version: match[1]!, date, revised: Boolean(match[2]), sections: new Map(), line: index + 1 });
      section = undefined;
    } else if (line.startsWith("### ") && entries.length) {
      const name = line.slice(4).trim();
      if (!(SECTIONS as readonly string[]).includes(name)) {
        throw new Error(`line ${index + 1}: section "${name}" is not one of ${SECTIONS.join(", ")}`);
      }
      section = [];
      entries.at(-1)!.sections.set(name, section);
    } else if (line.startsWith("- ") && section) {
      section.push(line.slice(2));
    }
  }
  return entries;
}

/**
 * What is wrong with `file`'s entry for `version` (empty when nothing): it must be the first
 * entry, have at least one item, and carry a date once the version is released.
 */
export function checkEntry(file: string, text: string, version: string, released: boolean): string[] {
  let entries: ChangelogEntry[];
  try {
    entries = parseChangelog(text);
  } catch (error) {
    return [`${file}: ${(error as Error).message}`];
  }
  const entry = entries.find((candidate) => candidate.version === version && !candidate.revised);
  if (!entry) return [`${file} has no entry for ${version}: add "## ${version} — Unreleased" and date it on release`];
  const problems: string[] = [];
  const listed = [...entry.sections.values()].some((items) => items.length);
  if (entries[0] !== entry)
    problems.push(`${file}: the entry for ${version} (line ${entry.line}) is not the first; newest first`);
  if (!listed) problems.push(`${file}: the entry for ${version} (line ${entry.line}) lists no change`);
  if (released && !entry.date) {
    problems.push(
      `${file}: ${version} is released (contract/released/${version}.yaml) but its entry says Unreleased: date it`,
    );
  }
  return problems;
}

/**
 * The changelog as a section of the docs page (the contract's info.description), under
 * `## Changelog`: the file's title and introduction left out, each version a `###` heading (a
 * sidebar entry) and each section's name in bold, since the renderer lists every heading.
 */
export function changelogForDocs(text: string): string {
  const start = text.search(/^## /m);
  const body = start < 0 ? "" : text.slice(start);
  return `## Changelog\n\n${body
    .replace(/^## /gm, "### ")
    .replace(/^### (\w+)$/gm, "**$1**")
    .trimEnd()}\n`;
}
