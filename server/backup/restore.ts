/**
 * `DATA_DIR=<dir> npm run admin -- restore <file> [--force]`: a backup file (server/backup/archive.ts)
 * made into the embedded database's directory again, offline. In this order, so that nothing is
 * touched by a file that would not do:
 *
 * 1. the file is read through and checked against its manifest (sizes, SHA-256, nothing more);
 * 2. its migrations against this version's: a backup with a contracting migration this version
 *    does not have is refused (as the server would refuse the database);
 * 3. the directory is locked as a server locks it, so a running server's directory is refused and
 *    no server starts on it meanwhile; a directory holding anything is refused without `--force`;
 * 4. the file is extracted into a folder inside the directory, checked again as it is written,
 *    and opened with PGlite: its `schema_migrations` must read as the manifest says;
 * 5. only then, with `--force`, what the directory held is moved aside into
 *    `.replaced-<time>/` inside it (never deleted), and the restored files take its place.
 *
 * Everything happens inside the directory, so it works on a container's volume (a mount point
 * that cannot itself be renamed) and every move is a rename on one disk.
 */
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { DataDirLockedError, lockDataDir } from "../store/data-dir-lock.ts";
import { isDatabaseEntry, REPLACED_PREFIX, RESTORE_PREFIX } from "../store/embedded-database.ts";
import { embeddedOptions } from "../store/embedded-settings.ts";
import { knownMigrations } from "../store/migrate.ts";
import { type BackupManifest, readBackup } from "./archive.ts";

/** A restore refused or failed; the directory is as it was. */
export class RestoreError extends Error {
  override name = "RestoreError";
}

export interface RestoreOutcome {
  manifest: BackupManifest;
  dir: string;
  /** Where what the directory held was moved, or null when it held nothing. */
  replaced: string | null;
  /** Expand-only migrations of a newer version the backup has, which this version runs beside. */
  newer: string[];
}

const stamp = (now: Date) => now.toISOString().replace(/[:.]/g, "-");

/** Checks a backup file without restoring it: the manifest, or a BackupFileError saying what is wrong. */
export const checkBackup = (file: string): Promise<BackupManifest> => readBackup(file);

export async function restoreBackup(
  file: string,
  dataDir: string,
  { force = false, now = new Date() }: { force?: boolean; now?: Date } = {},
): Promise<RestoreOutcome> {
  const dir = resolve(dataDir);
  const manifest = await readBackup(file);

  const known = await knownMigrations();
  const newer = manifest.migrations.filter((name) => !known.has(name));
  const contracting = newer.filter((name) => manifest.contracting.includes(name));
  if (contracting.length > 0)
    throw new RestoreError(
      `the backup was taken by version ${manifest.server_version} after contracting migrations this version does not have (${contracting.join(", ")}): restore it with that version`,
    );

  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new RestoreError(`DATA_DIR ${dir} cannot be created: ${(error as Error).message}`);
  }
  let lock: Awaited<ReturnType<typeof lockDataDir>>;
  try {
    lock = await lockDataDir(dir, { retries: 0, onCompromised: () => undefined });
  } catch (error) {
    if (error instanceof DataDirLockedError)
      throw new RestoreError(
        `DATA_DIR ${dir} is in use by process ${error.holder.pid} on ${error.holder.host} (started ${error.holder.started_at}): a restore is made offline. Stop that server first (a lock left by a killed one is taken over once untouched for 10 s)`,
      );
    throw new RestoreError(`DATA_DIR ${dir} cannot be locked: ${(error as Error).message}`);
  }
  try {
    const held = (await readdir(dir)).filter(isDatabaseEntry);
    if (held.length > 0 && !force)
      throw new RestoreError(
        `DATA_DIR ${dir} is not empty (it has ${held.slice(0, 3).join(", ")}${held.length > 3 ? ", …" : ""}): restore into a new or empty directory, or add --force to move what it holds into ${dir}/${REPLACED_PREFIX}<time>/ first`,
      );
    const stage = join(dir, `${RESTORE_PREFIX}${process.pid}`);
    await rm(stage, { recursive: true, force: true });
    await mkdir(stage);
    try {
      await readBackup(file, { extractTo: stage });
      await openAndCompare(stage, manifest);
    } catch (error) {
      await rm(stage, { recursive: true, force: true });
      throw error;
    }
    let replaced: string | null = null;
    if (held.length > 0) {
      replaced = join(dir, `${REPLACED_PREFIX}${stamp(now)}`);
      await mkdir(replaced);
      for (const name of held) await rename(join(dir, name), join(replaced, name));
    }
    for (const name of await readdir(stage)) await rename(join(stage, name), join(dir, name));
    await rm(stage, { recursive: true, force: true });
    return { manifest, dir, replaced, newer };
  } finally {
    lock.release();
  }
}

/** Opens the restored copy as the server would and reads its migrations: they must be the manifest's. */
async function openAndCompare(stage: string, manifest: BackupManifest): Promise<void> {
  let db: PGlite | undefined;
  try {
    db = new PGlite(stage, embeddedOptions());
    await db.waitReady;
    const { rows } = await db.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name");
    const names = rows.map((row) => row.name);
    if (JSON.stringify(names) !== JSON.stringify([...manifest.migrations].sort()))
      throw new RestoreError(
        `the restored database's migrations (${names.length}, up to ${names.at(-1)}) are not those its manifest lists (${manifest.migrations.length})`,
      );
  } catch (error) {
    if (error instanceof RestoreError) throw error;
    throw new RestoreError(`the restored database cannot be opened: ${(error as Error).message ?? String(error)}`);
  } finally {
    await db?.close().catch(() => undefined);
  }
}
