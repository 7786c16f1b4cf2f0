/**
 * The operator CLI's backup commands: `backup <file>` (online, through the running server's
 * operator API: `POST /admin/v1/backup`, the file written here and checked) and
 * `restore <file> [--force]` (offline, into DATA_DIR; server/backup/restore.ts).
 */
import { createWriteStream, existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { parseArgs } from "node:util";
import { type BackupManifest, BackupFileError, readBackup } from "../backup/archive.ts";
import { RestoreError, restoreBackup } from "../backup/restore.ts";
import { loadCliConfig } from "../config.ts";
import { adminClient } from "./admin-client.ts";

export const BACKUP_COMMANDS = {
  backup: {
    usage: "backup <file>",
    summary: "Back up the running server's embedded database into <file> (a .tar.gz), then check the file.",
    help: `Takes a backup while the server serves: POST /admin/v1/backup streams a snapshot of its
embedded database, written to <file> (never over an existing file) and checked against its
manifest. On PostgreSQL use pg_dump instead.`,
  },
  restore: {
    usage: "restore <file> [--force]",
    summary: "Restore a backup into DATA_DIR, offline (no server may hold the directory).",
    help: `Checks <file> through, then restores it into DATA_DIR (default ./.data), which no server may
hold. A directory that holds anything is refused unless --force, which moves what it holds into
DATA_DIR/.replaced-<time>/ (delete that once the server runs on the restored database).

Options:
  --force                 move what DATA_DIR holds aside first

Environment:
  DATA_DIR     the embedded database's directory (default ./.data), as the server reads it`,
  },
} as const;

interface Io {
  env: Record<string, string | undefined>;
  fetch: (input: Request) => Promise<Response>;
  out: (text: string) => void;
  err: (text: string) => void;
}

const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

function describe(manifest: BackupManifest): string {
  const size = manifest.files.reduce((sum, file) => sum + file.size, 0);
  return `taken ${manifest.created_at} by server ${manifest.server_version}, ${manifest.files.length} files (${megabytes(size)}), migrations up to ${manifest.migrations.at(-1) ?? "none"}`;
}

/** Runs `backup …` or `restore …`; resolves with the exit code (0 done, 1 refused or failed, 2 usage). */
export async function runBackupCommand(argv: string[], io: Io): Promise<number> {
  const name = argv[0] as keyof typeof BACKUP_COMMANDS;
  const command = BACKUP_COMMANDS[name];
  if (argv.includes("--help") || argv.includes("-h")) {
    io.out(`${command.summary}\n\nUsage: npm run admin -- ${command.usage}\n\n${command.help}`);
    return 0;
  }
  let file: string;
  let force = false;
  try {
    const parsed = parseArgs({
      args: argv.slice(1),
      allowPositionals: true,
      options: name === "restore" ? { force: { type: "boolean" } } : {},
    });
    if (parsed.positionals.length !== 1) throw new Error("give one <file>");
    file = resolve(parsed.positionals[0]!);
    force = parsed.values.force === true;
  } catch (error) {
    io.err(`admin ${name}: ${(error as Error).message}\nUsage: npm run admin -- ${command.usage}   (--help for more)`);
    return 2;
  }
  return name === "backup" ? backup(file, io) : restore(file, force, io);
}

async function backup(file: string, io: Io): Promise<number> {
  if (existsSync(file)) {
    io.err(`admin backup: ${file} exists already: name a new file.`);
    return 2;
  }
  let config: { adminUrl: string; adminToken: string };
  try {
    config = loadCliConfig(io.env);
  } catch (error) {
    io.err(`admin: ${(error as Error).message}`);
    return 2;
  }
  const client = adminClient(config.adminUrl, config.adminToken, io.fetch);
  const answer = await client.POST("/backup", { parseAs: "stream" }).catch(() => null);
  if (answer === null) {
    io.err(
      `admin backup: cannot reach the operator API at ${config.adminUrl}: is the server running? Set ADMIN_URL (or PORT) to where it listens.`,
    );
    return 1;
  }
  if (!answer.response.ok || !answer.data) {
    const { status } = answer.response;
    const error = (answer.error as { error?: { code?: string; message?: string } } | undefined)?.error;
    io.err(
      `admin backup: ${
        status === 401
          ? `the server at ${config.adminUrl} refused the operator token: set ADMIN_TOKEN to the server's own.`
          : error?.code
            ? `${error.code}: ${error.message}`
            : status === 404
              ? `the server at ${config.adminUrl} has no operator API, or none that takes backups: start it with ADMIN_TOKEN set (or check ADMIN_URL).`
              : `HTTP ${status}`
      }`,
    );
    return 1;
  }
  // Written beside the file, renamed once whole and checked: a file by that name is a good backup.
  const partial = `${file}.partial`;
  try {
    await pipeline(
      Readable.fromWeb(answer.data as unknown as WebReadableStream<Uint8Array>),
      createWriteStream(partial, { flags: "wx" }),
    );
    const manifest = await readBackup(partial);
    await rename(partial, file);
    io.out(`Backup written to ${file} and checked: ${describe(manifest)}.`);
    io.out(`Restore it with: DATA_DIR=<dir> npm run admin -- restore ${file}`);
    return 0;
  } catch (error) {
    await rm(partial, { force: true });
    io.err(
      `admin backup: ${error instanceof BackupFileError ? `the file the server sent is not a good backup: ${error.message}` : `the backup could not be written: ${(error as Error).message}`}`,
    );
    return 1;
  }
}

async function restore(file: string, force: boolean, io: Io): Promise<number> {
  const url = io.env.DATABASE_URL;
  if (url?.startsWith("postgres")) {
    io.err(
      "admin restore: DATABASE_URL names PostgreSQL; restore is for the embedded database. Use pg_restore (or psql) for PostgreSQL.",
    );
    return 2;
  }
  const dataDir = io.env.DATA_DIR || "./.data";
  try {
    const outcome = await restoreBackup(file, dataDir, { force });
    io.out(`Restored ${file} into ${outcome.dir}: ${describe(outcome.manifest)}.`);
    if (outcome.replaced)
      io.out(
        `What ${outcome.dir} held before is in ${outcome.replaced}: delete it once the server runs on the restored database.`,
      );
    if (outcome.newer.length > 0)
      io.out(
        `The backup has migrations of a newer version (${outcome.newer.join(", ")}); they only add, so this version runs on it.`,
      );
    io.out("Start the server on it (npm start, or the container).");
    return 0;
  } catch (error) {
    if (error instanceof BackupFileError) {
      io.err(`admin restore: ${file} cannot be restored: ${error.message}. Nothing was changed.`);
      return 1;
    }
    if (error instanceof RestoreError) {
      io.err(`admin restore: ${error.message}. Nothing was changed.`);
      return 1;
    }
    throw error;
  }
}
