import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadContract } from "../contract/contract.ts";
import { changelogForDocs, checkEntry, parseChangelog } from "./changelog.ts";

const read = (file: string) => readFileSync(fileURLToPath(new URL(`../${file}`, import.meta.url)), "utf8");

const SAMPLE = `# Changelog

Intro.

## 1.2.0 — Unreleased

### Added

- A thing.

## 1.1.0 — 2026-11-25

### Fixed

- Another thing.
`;

describe("the changelogs", () => {
  it.each(["CHANGELOG.md", "sdk/CHANGELOG.md"])(
    "%s opens with the contract's version, dated, and dates every entry",
    async (file) => {
      const entries = parseChangelog(read(file));
      expect(entries[0]).toMatchObject({ version: (await loadContract()).version, revised: false });
      for (const entry of entries) expect(entry.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    },
  );

  it("keeps the spec's own entries of 2026-08-07 and 2026-09-04", () => {
    const dates = parseChangelog(read("CHANGELOG.md")).map((entry) => entry.date);
    expect(dates).toEqual(expect.arrayContaining(["2026-09-04", "2026-08-07"]));
  });
});

describe("parseChangelog", () => {
  it("reads entries, dates (null while unreleased) and sections", () => {
    const [next, current] = parseChangelog(SAMPLE);
    expect(next).toMatchObject({ version: "1.2.0", date: null, revised: false, line: 5 });
    expect([...next!.sections]).toEqual([["Added", ["A thing."]]]);
    expect(current).toMatchObject({ version: "1.1.0", date: "2026-11-25" });
  });

  it("refuses a heading without a version and date, and a section it does not know", () => {
    expect(() => parseChangelog("## Next release\n")).toThrow(
      /line 1: "## Next release" is not "## <MAJOR.MINOR.PATCH> — <YYYY-MM-DD or Unreleased>"/,
    );
    expect(() => parseChangelog("## 1.0.0 — 2026-08-07\n\n### Misc\n")).toThrow(
      /line 3: section "Misc" is not one of Added, Changed, Removed, Fixed/,
    );
  });
});

describe("checkEntry", () => {
  it("accepts the first entry with a change, and an unreleased one until it is released", () => {
    expect(checkEntry("CHANGELOG.md", SAMPLE, "1.2.0", false)).toEqual([]);
    expect(checkEntry("CHANGELOG.md", SAMPLE, "1.2.0", true)).toEqual([
      "CHANGELOG.md: 1.2.0 is released (contract/released/1.2.0.yaml) but its entry says Unreleased: date it",
    ]);
  });

  it("names a missing entry, one that is not first, and one that lists nothing", () => {
    expect(checkEntry("CHANGELOG.md", SAMPLE, "1.3.0", false)[0]).toMatch(/^CHANGELOG\.md has no entry for 1\.3\.0/);
    expect(checkEntry("CHANGELOG.md", SAMPLE, "1.1.0", true)).toEqual([
      "CHANGELOG.md: the entry for 1.1.0 (line 11) is not the first; newest first",
    ]);
    expect(checkEntry("CHANGELOG.md", "## 1.0.1 — 2026-12-01\n\n### Fixed\n", "1.0.1", true)).toEqual([
      "CHANGELOG.md: the entry for 1.0.1 (line 1) lists no change",
    ]);
  });
});

describe("changelogForDocs", () => {
  it("is a Changelog section of the docs page: no title or introduction, versions as headings, sections in bold", () => {
    expect(changelogForDocs(SAMPLE)).toBe(
      "## Changelog\n\n### 1.2.0 — Unreleased\n\n**Added**\n\n- A thing.\n\n### 1.1.0 — 2026-11-25\n\n**Fixed**\n\n- Another thing.\n",
    );
  });
});
