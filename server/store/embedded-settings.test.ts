import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "./database.ts";
import { EMBEDDED_SETTINGS } from "./embedded-settings.ts";

const scratch = mkdtempSync(join(tmpdir(), "embedded-settings-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the embedded database's settings", () => {
  it.each([
    ["in memory", "memory:"],
    ["on disk", undefined],
  ])("hold %s, over initdb's postgresql.conf (shared_buffers 128MB)", async (_where, url) => {
    const db = await openDatabase(url, { dataDir: join(scratch, "data") });
    try {
      for (const [name, value] of Object.entries(EMBEDDED_SETTINGS)) {
        expect(await db.query("SELECT current_setting($1) AS value", [name])).toEqual([{ value }]);
      }
      expect(await db.query("SELECT current_setting('wal_buffers') AS value")).toEqual([{ value: "512kB" }]);
    } finally {
      await db.close();
    }
  });
});
