/**
 * A new embedded database starts as a copy of an empty one made at build time, instead of
 * running PostgreSQL's initdb at the server's first start. initdb in PGlite is a second
 * PostgreSQL in the process: it took 3 s of CPU and the start's memory peaked at 600 MB, where
 * copying the 39 MB (971 files) it writes takes about 0.2 s of CPU (docs/performance.md, Start-up).
 *
 * The template is exactly what PGlite's initdb makes, nothing of ours in it: migrations run on
 * the copy as on any new database. It belongs to one PGlite version (its PostgreSQL catalogue),
 * so its directory is named after it; with no template for the installed PGlite (no build, or
 * PGlite upgraded since), the server runs initdb as before.
 */
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { HOLDER_FILE, LOCK_FILE } from "./data-dir-lock.ts";
import { embeddedOptions } from "./embedded-settings.ts";

/** Where `npm run build` (scripts/build-database-template.ts) leaves the templates. */
export const TEMPLATES_DIR = fileURLToPath(new URL("../../build/database-template/", import.meta.url));

/** The installed PGlite's version, from its package.json (which its exports do not name). */
export function pgliteVersion(): string {
  const entry = fileURLToPath(import.meta.resolve("@electric-sql/pglite"));
  const manifest = join(dirname(entry), "..", "package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

/** The template for the installed PGlite, whether or not it was built. */
export function templateDir(root: string = TEMPLATES_DIR): string {
  return join(root, `pglite-${pgliteVersion()}`);
}

/**
 * The same template as PGlite's own archive (a gzip'd tar, 4.5 MB), from which an in-memory
 * database starts (embedded-database.ts `openInMemory`): PGlite unpacks it into its memory file
 * system in about 0.5 s, where initdb took 2 s and peaked at 540 MB.
 */
export function templateArchive(root: string = TEMPLATES_DIR): string {
  return `${templateDir(root)}.tar.gz`;
}

/**
 * Fills `dataDir`, which must be empty but for the lock file, with a copy of the template; false,
 * leaving it as it was, when there is no template. PG_VERSION, by which PGlite and openEmbedded
 * recognise a database, is copied last, and a copy that fails is removed: never half a database.
 */
export function copyTemplate(dataDir: string, template: string = templateDir()): boolean {
  const present = readdirSync(dataDir).filter((name) => name !== LOCK_FILE && name !== HOLDER_FILE);
  if (present.length > 0) throw new Error(`${dataDir} is not empty (it has ${present[0]})`);
  if (!existsSync(join(template, "PG_VERSION"))) return false;
  const names = [...readdirSync(template).filter((name) => name !== "PG_VERSION"), "PG_VERSION"];
  try {
    for (const name of names) {
      cpSync(join(template, name), join(dataDir, name), { recursive: true });
      // The copy keeps the template's modes, and an installed template may be read-only (a
      // container image's, owned by root): the database's files must be the server's to write.
      makeWritable(join(dataDir, name));
    }
  } catch (error) {
    for (const name of names) rmSync(join(dataDir, name), { recursive: true, force: true });
    throw error;
  }
  return true;
}

function makeWritable(path: string): void {
  const directory = statSync(path).isDirectory();
  chmodSync(path, directory ? 0o700 : 0o600);
  if (directory) for (const name of readdirSync(path)) makeWritable(join(path, name));
}

/**
 * Makes the template for the installed PGlite under `root`: initdb in a scratch directory beside
 * it, moved into place once complete, so a build stopped halfway leaves no template rather than
 * a broken one. Returns its directory.
 */
export async function makeTemplate(root: string = TEMPLATES_DIR): Promise<string> {
  const target = templateDir(root);
  const archive = templateArchive(root);
  mkdirSync(root, { recursive: true });
  const scratch = `${target}.tmp-${process.pid}`;
  const scratchArchive = `${archive}.tmp-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  const db = new PGlite(scratch, embeddedOptions());
  await db.waitReady;
  writeFileSync(scratchArchive, new Uint8Array(await (await db.dumpDataDir("gzip")).arrayBuffer()));
  await db.close();
  rmSync(target, { recursive: true, force: true });
  renameSync(scratch, target);
  renameSync(scratchArchive, archive);
  // Templates of other PGlite versions are no use to this install.
  const kept = new Set([basename(target), basename(archive)]);
  for (const name of readdirSync(root)) if (!kept.has(name)) rmSync(join(root, name), { recursive: true, force: true });
  return target;
}
