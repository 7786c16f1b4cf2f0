import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "./database.ts";
import { copyTemplate, makeTemplate, pgliteVersion, templateArchive, templateDir } from "./embedded-template.ts";
import { openInMemory } from "./embedded-database.ts";
import { LOCK_FILE } from "./data-dir-lock.ts";
import { migrate } from "./migrate.ts";

const scratch = mkdtempSync(join(tmpdir(), "embedded-template-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function emptyDir(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir);
  return dir;
}

describe("the new embedded database's template (build/database-template)", () => {
  it("is initdb's output for the installed PGlite; a new data directory is a copy that opens, migrates and keeps its data", {
    timeout: 120_000,
  }, async () => {
    const root = join(scratch, "templates");
    mkdirSync(join(root, "pglite-0.0.1"), { recursive: true });
    const template = await makeTemplate(root);
    expect(template).toBe(templateDir(root));
    expect(readdirSync(root).sort()).toEqual([`pglite-${pgliteVersion()}`, `pglite-${pgliteVersion()}.tar.gz`]);

    // An in-memory database starts from the archive of the same template (read: a damaged one is refused).
    const inMemory = await openInMemory({ archive: templateArchive(root) });
    try {
      expect(await migrate(inMemory)).not.toHaveLength(0);
    } finally {
      await inMemory.close();
    }
    const damaged = join(scratch, "damaged.tar.gz");
    writeFileSync(damaged, "not an archive");
    await expect(openInMemory({ archive: damaged })).rejects.toThrow();

    const dataDir = emptyDir("copied");
    writeFileSync(join(dataDir, LOCK_FILE), "{}");
    expect(copyTemplate(dataDir, template)).toBe(true);
    expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(true);
    rmSync(join(dataDir, LOCK_FILE));

    const db = await openDatabase(undefined, { dataDir });
    try {
      expect(await migrate(db)).not.toHaveLength(0);
      await db.exec("CREATE TABLE kept (name text); INSERT INTO kept VALUES ('Kept')");
    } finally {
      await db.close();
    }
    const reopened = await openDatabase(undefined, { dataDir });
    try {
      expect(await migrate(reopened)).toEqual([]);
      expect(await reopened.query("SELECT name FROM kept")).toEqual([{ name: "Kept" }]);
    } finally {
      await reopened.close();
    }
  });

  it("gives the server its own writable copy of a read-only template (a container image's, owned by root)", () => {
    const template = emptyDir("read-only-template");
    mkdirSync(join(template, "base"));
    writeFileSync(join(template, "base", "1"), "page");
    writeFileSync(join(template, "PG_VERSION"), "17");
    for (const file of [join(template, "base", "1"), join(template, "PG_VERSION")]) chmodSync(file, 0o444);
    chmodSync(join(template, "base"), 0o555);
    const dataDir = emptyDir("from-read-only");
    expect(copyTemplate(dataDir, template)).toBe(true);
    const mode = (path: string) => statSync(join(dataDir, path)).mode & 0o777;
    expect([mode("base"), mode("base/1"), mode("PG_VERSION")]).toEqual([0o700, 0o600, 0o600]);
  });

  it("copies nothing when there is no template for the installed PGlite (the server runs initdb then)", () => {
    const dataDir = emptyDir("no-template");
    expect(copyTemplate(dataDir, join(scratch, "absent", "pglite-0.0.1"))).toBe(false);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it("refuses a directory that holds anything but the lock file", () => {
    const dataDir = emptyDir("not-empty");
    writeFileSync(join(dataDir, "notes.txt"), "mine");
    expect(() => copyTemplate(dataDir, join(scratch, "absent"))).toThrow(`${dataDir} is not empty (it has notes.txt)`);
    expect(readdirSync(dataDir)).toEqual(["notes.txt"]);
  });
});
