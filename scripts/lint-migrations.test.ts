import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./docs-paths.ts";
import { checkMigrations, describeReport, MigrationLintError, previousRelease } from "./migration-lint.ts";

const scratch = mkdtempSync(join(tmpdir(), "lsh-lint-migrations-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Today's migrations plus `extra`, in a folder of their own: the release being made, with one more migration. */
function withMigration(name: string, sql: string): string {
  const dir = mkdtempSync(join(scratch, "migrations-"));
  cpSync(join(ROOT, "server/store/migrations"), dir, { recursive: true });
  writeFileSync(join(dir, name), sql);
  return dir;
}

// Each check reads the previous release's server code from git (a few seconds).
const SLOW = { timeout: 60_000 };

describe("npm run lint:migrations against the previous release (git history)", SLOW, () => {
  it("passes on today's tree, naming the contracting migrations and what the upgrade from the previous release needs", async () => {
    const report = await checkMigrations({ root: ROOT });
    expect(report.previous.version).toBe(previousRelease(ROOT).version);
    expect(report.refused).toEqual([]);
    expect(report.rewritten).toEqual([]);
    const { passed, lines } = describeReport(report);
    expect(passed, lines.join("\n")).toBe(true);
    if (report.previous.version === "1.4.0") {
      expect(report.contracting.map((entry) => entry.migration)).toEqual([
        "015_account_safety.sql",
        "027_member_identity_per_brand.sql",
      ]);
      const [dropped, replaced] = report.contracting;
      expect(dropped!.findings.map((finding) => finding.change)).toEqual(["drops table sign_in_failures"]);
      expect(replaced!.findings.map((finding) => finding.change)).toEqual([
        "drops or replaces members_email_current, the unique index of ON CONFLICT (email) on members",
      ]);
      expect(replaced!.findings[0]!.usedBy[0]).toMatch(/^server\/store\/members\.ts:\d+: INSERT INTO members/);
    }
  });

  it("refuses a migration that drops a column the previous release reads, naming where it reads it", async () => {
    const migrationsDir = withMigration("031_drop_product_name.sql", "ALTER TABLE streams DROP COLUMN product_name;\n");
    const report = await checkMigrations({ root: ROOT, migrationsDir });
    expect(report.refused.map((finding) => [finding.migration, finding.change])).toEqual([
      ["031_drop_product_name.sql", "drops column streams.product_name"],
    ]);
    expect(report.refused[0]!.usedBy.some((line) => line.startsWith("server/store/streams.ts:"))).toBe(true);
    const { passed, lines } = describeReport(report);
    expect(passed).toBe(false);
    expect(lines.join("\n")).toContain(
      `refused: 031_drop_product_name.sql drops column streams.product_name, which ${report.previous.version} still uses:`,
    );
  });

  it("refuses a rename, a new type, a dropped table, a NOT NULL column without a default, and an ON CONFLICT's unique key dropped", async () => {
    const migrationsDir = withMigration(
      "031_contracting.sql",
      `ALTER TABLE webhooks RENAME COLUMN url TO target;
ALTER TABLE brands ALTER COLUMN credits_cents TYPE numeric;
DROP TABLE provider_rooms;
ALTER TABLE streams ADD COLUMN region text NOT NULL;
ALTER TABLE streams ADD COLUMN note text NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
CREATE TABLE unheard_of (id int PRIMARY KEY);
ALTER TABLE unheard_of ADD COLUMN later int;
`,
    );
    const report = await checkMigrations({ root: ROOT, migrationsDir });
    expect(report.refused.map((finding) => finding.change)).toEqual([
      "renames column webhooks.url",
      "changes the type of column brands.credits_cents",
      "drops table provider_rooms",
      "adds column streams.region NOT NULL without a default",
      "drops or replaces idempotency_keys_pkey, the unique index of ON CONFLICT (api_key_id, idempotency_key) on idempotency_keys",
    ]);
  });

  it("accepts the same change marked `-- contract:`, and reports it", async () => {
    const migrationsDir = withMigration(
      "031_drop_product_name.sql",
      "-- contract: product_name moves to the stream's metadata.\nALTER TABLE streams DROP COLUMN product_name;\n",
    );
    const report = await checkMigrations({ root: ROOT, migrationsDir });
    expect(report.refused).toEqual([]);
    expect(report.contracting.at(-1)).toMatchObject({
      migration: "031_drop_product_name.sql",
      reason: "product_name moves to the stream's metadata.",
      findings: [expect.objectContaining({ change: "drops column streams.product_name" })],
    });
    expect(describeReport(report).passed).toBe(true);
  });

  it("refuses a released migration changed since its release", async () => {
    const migrationsDir = withMigration("031_nothing.sql", "SELECT 1;\n");
    writeFileSync(join(migrationsDir, "001_initial.sql"), "CREATE TABLE brands (id uuid PRIMARY KEY);\n");
    const report = await checkMigrations({ root: ROOT, migrationsDir });
    expect(report.rewritten).toEqual(["001_initial.sql: changed"]);
    expect(describeReport(report).passed).toBe(false);
  });

  it("says it cannot check without git history, and exits 2", async () => {
    const copy = join(scratch, "no-git");
    mkdirSync(join(copy, "contract/released"), { recursive: true });
    writeFileSync(join(copy, "package.json"), JSON.stringify({ version: "1.5.0" }));
    writeFileSync(join(copy, "contract/released/1.4.0.yaml"), "openapi: 3.1.0\n");
    expect(() => previousRelease(copy)).toThrow(MigrationLintError);
    expect(() => previousRelease(copy)).toThrow(/is not a git checkout: the previous release's code \(1\.4\.0\)/);
  });

  it("npm run lint:migrations exits 1 on the refused migration, 0 on today's tree", async () => {
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ["scripts/lint-migrations.ts"], { cwd: ROOT });
    expect(stdout).toMatch(/^lint:migrations passed/m);
    const migrations = withMigration("031_drop_product_name.sql", "ALTER TABLE streams DROP COLUMN product_name;\n");
    const refused = await run(process.execPath, ["scripts/lint-migrations.ts", "--migrations", migrations], {
      cwd: ROOT,
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toMatch(/refused: 031_drop_product_name\.sql drops column streams\.product_name/);
    expect(refused?.stderr).toMatch(/^lint:migrations failed/m);
  });
});
