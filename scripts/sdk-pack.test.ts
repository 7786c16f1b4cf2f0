/**
 * A release's SDK tarball can be rebuilt byte for byte: `npm run sdk:pack` twice, from the same
 * sources, under different umasks and at different times.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { afterAll, expect, it } from "vitest";
import { readManifest } from "./sdk-package.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "sdk-pack-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `npm run sdk:pack` into a directory of its own under `umask`; the tarball's bytes. */
async function pack(name: string, umask: string): Promise<Buffer> {
  const destination = join(scratch, name);
  await promisify(execFile)(
    "sh",
    ["-c", `umask ${umask} && npm run --silent sdk:pack -- --destination "${destination}"`],
    { cwd: ROOT },
  );
  const [tarball] = readdirSync(destination).filter((file) => file.endsWith(".tgz"));
  return readFileSync(join(destination, tarball!));
}

/** The entries of a .tgz in order: path, mode and mtime from each 512-byte ustar header. */
function entries(tgz: Buffer): Array<{ path: string; mode: string; mtime: string }> {
  const tar = gunzipSync(tgz);
  const list = [];
  for (let offset = 0; offset + 512 <= tar.length && tar[offset] !== 0; ) {
    const field = (start: number, length: number) =>
      tar
        .subarray(offset + start, offset + start + length)
        .toString("utf8")
        .replace(/\0.*$/s, "")
        .trim();
    const [name, prefix] = [field(0, 100), field(345, 155)];
    const size = parseInt(field(124, 12), 8);
    list.push({
      path: prefix ? `${prefix}/${name}` : name,
      mode: field(100, 8).slice(-3),
      mtime: new Date(parseInt(field(136, 12), 8) * 1000).toISOString(),
    });
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return list;
}

it("packs the same bytes twice, whatever the umask: fixed modes and times, CHANGELOG.md inside", async () => {
  const first = await pack("first", "022");
  const second = await pack("second", "077");
  expect(second.equals(first)).toBe(true);
  const files = entries(first);
  expect(files.map((file) => file.path)).toEqual(
    expect.arrayContaining(["package/package.json", "package/README.md", "package/CHANGELOG.md"]),
  );
  const bins = new Set(Object.values(readManifest().bin).map((bin) => `package/${bin}`));
  for (const file of files)
    expect(file).toEqual({
      path: file.path,
      mode: bins.has(file.path) ? "755" : "644",
      mtime: "1985-10-26T08:15:00.000Z",
    });
}, 180_000);
