/**
 * The backup file of the embedded database: a gzip-compressed tar (`tar tzf` lists it) whose first
 * entry is `manifest.json` (what took it, the migrations the database had, every file with its
 * size and SHA-256), followed by the data directory under `data/`. Written by the server
 * (server/backup/take.ts), checked by the CLI after a download and before a restore
 * (server/backup/restore.ts), which refuses anything the manifest does not vouch for.
 */
import { createHash } from "node:crypto";
import { closeSync, createReadStream, createWriteStream, openSync, readSync, statSync } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import { join, posix } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";

export const BACKUP_FORMAT = "live-stream-hosting-backup";
export const BACKUP_FORMAT_VERSION = 1;
const MANIFEST = "manifest.json";
const DATA = "data/";
/** A manifest lists a few thousand files: far below this. */
const MANIFEST_MAX_BYTES = 64 << 20;

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  created_at: string;
  /** The server's version (package.json) and the embedded database's. */
  server_version: string;
  pglite_version: string;
  postgres_version: string;
  /** The migrations the database had applied, and which of them were contracting. */
  migrations: string[];
  contracting: string[];
  directories: string[];
  files: { path: string; size: number; sha256: string }[];
}

/** The file is not a backup this version can restore, or is damaged. */
export class BackupFileError extends Error {
  override name = "BackupFileError";
}

// ---------------------------------------------------------------- tar (POSIX ustar)

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

/** A ustar header; names longer than 100 bytes are split into prefix and name at a slash. */
function tarHeader(path: string, size: number, type: "0" | "5", mtime: number): Buffer {
  let name = path;
  let prefix = "";
  if (Buffer.byteLength(name) > 100) {
    const cut = path.indexOf("/", Math.max(0, path.length - 101));
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
    if (Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155)
      throw new Error(`${path}: too long a name for tar`);
  }
  const header = Buffer.alloc(BLOCK);
  header.write(name, 0, 100);
  header.write(octal(type === "5" ? 0o755 : 0o600, 8), 100);
  header.write(octal(0, 8), 108);
  header.write(octal(0, 8), 116);
  header.write(octal(size, 12), 124);
  header.write(octal(Math.floor(mtime / 1000), 12), 136);
  header.write("        ", 148);
  header.write(type, 156);
  header.write("ustar\0", 257);
  header.write("00", 263);
  header.write(prefix, 345, 155);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return header;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** Every directory and regular file under `root`, relative with `/`, directories first in each. */
export async function walk(root: string): Promise<{ directories: string[]; files: string[] }> {
  const directories: string[] = [];
  const files: string[] = [];
  const visit = async (relative: string): Promise<void> => {
    const entries = (await readdir(join(root, relative), { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    for (const entry of entries) {
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        directories.push(path);
        await visit(path);
      } else if (entry.isFile()) files.push(path);
    }
  };
  await visit("");
  return { directories, files };
}

/**
 * The server reads the snapshot in slices of this size, each read at once (synchronously) and
 * handed on whole: under load every await waits behind the requests' own callbacks, so a backup
 * made of a few thousand files read piece by piece would take minutes, where this takes one
 * event-loop turn per slice and blocks it for a millisecond or so each time.
 */
const SLICE = 1 << 20;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A file's bytes in slices of at most SLICE, read synchronously. */
function* slicesOf(path: string, size: number): Generator<Buffer> {
  const fd = openSync(path, "r");
  try {
    let at = 0;
    while (at < size) {
      const slice = Buffer.allocUnsafe(Math.min(SLICE, size - at));
      const read = readSync(fd, slice, 0, slice.length, at);
      if (read !== slice.length) throw new Error(`${path} changed while it was being read`);
      at += read;
      yield slice;
    }
  } finally {
    closeSync(fd);
  }
}

/** The manifest of a data directory copy: its files read once for their checksums. */
export async function describeDirectory(
  root: string,
  about: Omit<BackupManifest, "format" | "format_version" | "directories" | "files">,
): Promise<BackupManifest> {
  const { directories, files } = await walk(root);
  const listed: BackupManifest["files"] = [];
  let sinceTurn = 0;
  for (const path of files) {
    const { size } = statSync(join(root, path));
    const hash = createHash("sha256");
    for (const slice of slicesOf(join(root, path), size)) hash.update(slice);
    listed.push({ path, size, sha256: hash.digest("hex") });
    sinceTurn += size + BLOCK;
    if (sinceTurn >= 8 * SLICE) {
      sinceTurn = 0;
      await nextTurn();
    }
  }
  return { format: BACKUP_FORMAT, format_version: BACKUP_FORMAT_VERSION, ...about, directories, files: listed };
}

/** The tar stream (uncompressed) of a manifest and the directory it describes, in pieces of about SLICE. */
export async function* tarOf(root: string, manifest: BackupManifest): AsyncGenerator<Buffer> {
  const now = Date.now();
  let batch: Buffer[] = [];
  let batched = 0;
  const add = (piece: Buffer) => {
    batch.push(piece);
    batched += piece.length;
  };
  const take = () => {
    const whole = Buffer.concat(batch);
    batch = [];
    batched = 0;
    return whole;
  };
  const json = Buffer.from(`${JSON.stringify(manifest, null, 1)}\n`);
  add(tarHeader(MANIFEST, json.length, "0", now));
  add(json);
  add(padding(json.length));
  for (const path of manifest.directories) add(tarHeader(`${DATA}${path}/`, 0, "5", now));
  for (const { path, size } of manifest.files) {
    add(tarHeader(`${DATA}${path}`, size, "0", now));
    for (const slice of slicesOf(join(root, path), size)) {
      add(slice);
      if (batched >= SLICE) yield take();
    }
    add(padding(size));
  }
  add(Buffer.alloc(BLOCK * 2));
  yield take();
}

// ---------------------------------------------------------------- reading

/** Pulls exact byte counts from a stream of chunks. */
class Bytes {
  #buffered: Buffer[] = [];
  #length = 0;
  readonly #source: AsyncIterator<Buffer>;
  constructor(source: AsyncIterable<Buffer>) {
    this.#source = source[Symbol.asyncIterator]();
  }

  async #fill(wanted: number): Promise<boolean> {
    while (this.#length < wanted) {
      const next = await this.#source.next();
      if (next.done) return false;
      this.#buffered.push(next.value);
      this.#length += next.value.length;
    }
    return true;
  }

  /** Exactly `size` bytes, or null at the end of the stream (a partial read is an error). */
  async read(size: number): Promise<Buffer | null> {
    if (!(await this.#fill(size))) {
      if (this.#length === 0) return null;
      throw new BackupFileError("the file is incomplete: it ends inside an entry");
    }
    return this.#take(size);
  }

  #take(size: number): Buffer {
    const all = Buffer.concat(this.#buffered);
    this.#buffered = [all.subarray(size)];
    this.#length = all.length - size;
    return all.subarray(0, size);
  }

  /** `size` bytes as chunks, without holding them all. */
  async *chunks(size: number): AsyncGenerator<Buffer> {
    let left = size;
    while (left > 0) {
      if (this.#length === 0 && !(await this.#fill(1)))
        throw new BackupFileError("the file is incomplete: it ends inside an entry");
      const take = Math.min(left, this.#length);
      left -= take;
      yield this.#take(take);
    }
  }
}

function field(header: Buffer, offset: number, length: number): string {
  const raw = header.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString("utf8");
}

interface Entry {
  path: string;
  type: "file" | "directory";
  size: number;
}

function parseHeader(header: Buffer): Entry {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
  if (field(header, 257, 6) !== "ustar" || Number.parseInt(field(header, 148, 8), 8) !== sum)
    throw new BackupFileError("it is not a backup of this server (not a tar archive of the expected form)");
  const name = field(header, 0, 100);
  const prefix = field(header, 345, 155);
  const type = field(header, 156, 1);
  if (type !== "0" && type !== "5" && type !== "")
    throw new BackupFileError(`it holds an entry of a kind a backup never has (${name})`);
  return {
    path: prefix ? `${prefix}/${name}` : name,
    type: type === "5" ? "directory" : "file",
    size: Number.parseInt(field(header, 124, 12), 8) || 0,
  };
}

function checkManifest(manifest: unknown): BackupManifest {
  const m = manifest as Partial<BackupManifest> | null;
  if (m?.format !== BACKUP_FORMAT) throw new BackupFileError("it is not a backup of this server (no manifest)");
  if (m.format_version !== BACKUP_FORMAT_VERSION)
    throw new BackupFileError(
      `it is a backup of format ${m.format_version}, which this version does not read (it reads ${BACKUP_FORMAT_VERSION}): restore it with the version that took it (${m.server_version})`,
    );
  const names = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === "string");
  if (
    !names(m.migrations) ||
    !names(m.contracting) ||
    !names(m.directories) ||
    !Array.isArray(m.files) ||
    !m.files.every(
      (file) => typeof file?.path === "string" && Number.isSafeInteger(file.size) && /^[0-9a-f]{64}$/.test(file.sha256),
    )
  )
    throw new BackupFileError("its manifest is damaged");
  for (const path of [...m.directories!, ...m.files.map((file) => file.path)]) safeRelative(path);
  return m as BackupManifest;
}

/** A path that stays inside the directory it is extracted into. */
function safeRelative(path: string): string {
  const normal = posix.normalize(path);
  if (path === "" || posix.isAbsolute(path) || normal !== path || normal.split("/").includes(".."))
    throw new BackupFileError(`it names a path outside the data directory (${path})`);
  return normal;
}

export interface ReadOptions {
  /** Writes the data directory there as it is checked (the directory must exist and be empty). */
  extractTo?: string;
}

/**
 * Reads a backup file through and checks it against its manifest: every file listed once, with
 * its size and SHA-256, nothing unlisted, nothing outside the data directory, and the compressed
 * stream whole (gzip's own check). Returns the manifest; throws BackupFileError otherwise.
 */
export async function readBackup(file: string, { extractTo }: ReadOptions = {}): Promise<BackupManifest> {
  const gunzip = createGunzip();
  const input = createReadStream(file);
  input.on("error", (error) => gunzip.destroy(error));
  input.pipe(gunzip);
  const bytes = new Bytes(gunzip);
  try {
    const first = await bytes.read(BLOCK);
    if (first === null) throw new BackupFileError("it is empty");
    const head = parseHeader(first);
    if (head.path !== MANIFEST || head.size > MANIFEST_MAX_BYTES)
      throw new BackupFileError("it is not a backup of this server (its first entry is not manifest.json)");
    const text = (await bytes.read(head.size))?.toString("utf8") ?? "";
    await bytes.read(padding(head.size).length);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new BackupFileError("its manifest is damaged");
    }
    const manifest = checkManifest(parsed);
    const expected = new Map(manifest.files.map((entry) => [entry.path, entry]));
    const directories = new Set(manifest.directories);
    const seen = new Set<string>();
    for (;;) {
      const block = await bytes.read(BLOCK);
      if (block === null) throw new BackupFileError("the file is incomplete: it lacks the archive's end");
      if (block.every((byte) => byte === 0)) break;
      const entry = parseHeader(block);
      if (!entry.path.startsWith(DATA)) throw new BackupFileError(`it holds an unexpected entry (${entry.path})`);
      const path = safeRelative(entry.path.slice(DATA.length).replace(/\/$/, ""));
      if (seen.has(path)) throw new BackupFileError(`it holds ${path} twice`);
      seen.add(path);
      if (entry.type === "directory") {
        if (!directories.has(path))
          throw new BackupFileError(`it holds a directory its manifest does not list (${path})`);
        if (extractTo) await mkdir(join(extractTo, path), { recursive: true });
        continue;
      }
      const listed = expected.get(path);
      if (!listed || listed.size !== entry.size)
        throw new BackupFileError(`${path} is not as its manifest lists it (size ${entry.size})`);
      const hash = createHash("sha256");
      const body = bytes.chunks(entry.size);
      const hashed = (async function* () {
        for await (const chunk of body) {
          hash.update(chunk);
          yield chunk;
        }
      })();
      if (extractTo) await pipeline(hashed, createWriteStream(join(extractTo, path), { mode: 0o600 }));
      else for await (const _ of hashed);
      if (hash.digest("hex") !== listed.sha256)
        throw new BackupFileError(`${path} does not match its checksum: the file is damaged`);
      await bytes.read(padding(entry.size).length);
    }
    const missing = [...expected.keys(), ...directories].filter((path) => !seen.has(path));
    if (missing.length > 0)
      throw new BackupFileError(
        `the file is incomplete: ${missing.length} entries of its manifest are missing (${missing[0]}, …)`,
      );
    // Whatever follows the archive's end (tar pads to 10 KiB) is read so that gzip checks its trailer.
    for await (const _ of gunzip);
    return manifest;
  } catch (error) {
    gunzip.destroy();
    input.destroy();
    if (error instanceof BackupFileError) throw error;
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === "ENOENT") throw new BackupFileError("there is no such file");
    if (code === "Z_BUF_ERROR" || /unexpected end of file/.test(message))
      throw new BackupFileError("the file is incomplete: its compressed data ends early");
    if (code?.startsWith("Z_")) throw new BackupFileError(`it is damaged or not gzip-compressed (${message})`);
    throw error;
  }
}
