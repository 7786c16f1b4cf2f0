/**
 * `POST /admin/v1/backup`: a snapshot of the embedded database, sent as a backup file
 * (server/backup/archive.ts) while the server goes on serving. The snapshot is taken between two
 * statements (store/embedded-database.ts); sending it, which takes as long as the operator's
 * connection needs, reads the copy and holds up nothing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { constants, createGzip } from "node:zlib";
import type { Response } from "express";
import { ApiError } from "../domain/errors.ts";
import type { Database } from "../store/database.ts";
import { pgliteVersion } from "../store/embedded-template.ts";
import { type BackupManifest, describeDirectory, tarOf } from "./archive.ts";

/** This server's version, as package.json names it. */
export function serverVersion(): string {
  const file = new URL("../../package.json", import.meta.url);
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

/** One backup at a time per process: each holds a copy of the database on its disk until sent. */
let taking = false;

/** What a download's name says: when it was taken. */
const fileName = (manifest: BackupManifest) =>
  `lsh-backup-${manifest.created_at.replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")}.tar.gz`;

export async function sendBackup(db: Database, res: Response, now: Date): Promise<void> {
  if (!db.snapshot) throw new ApiError("backup_unavailable", db.noSnapshotReason);
  if (taking) throw new ApiError("backup_unavailable", "A backup is being taken already; try again once it is sent.");
  taking = true;
  try {
    const snapshot = await db.snapshot();
    try {
      const manifest = await describeDirectory(snapshot.dir, {
        created_at: now.toISOString(),
        server_version: serverVersion(),
        pglite_version: pgliteVersion(),
        postgres_version: readFileSync(join(snapshot.dir, "PG_VERSION"), "utf8").trim(),
        migrations: snapshot.migrations,
        contracting: snapshot.contracting,
      });
      res.status(200);
      res.set({
        "Content-Type": "application/gzip",
        "Content-Disposition": `attachment; filename="${fileName(manifest)}"`,
      });
      // Large output pieces (each one is a trip through the thread pool and back), quickly compressed:
      // the server is serving meanwhile.
      await pipeline(
        Readable.from(tarOf(snapshot.dir, manifest)),
        createGzip({ chunkSize: 1 << 20, level: constants.Z_BEST_SPEED }),
        res,
      );
    } finally {
      await snapshot.discard();
    }
  } catch (error) {
    // Once the file has begun, a failure (the operator's connection gone) can only cut it short:
    // the CLI finds the file incomplete and says so.
    if (!res.headersSent) throw error;
    res.destroy();
  } finally {
    taking = false;
  }
}
