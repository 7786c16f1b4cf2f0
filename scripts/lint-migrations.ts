/**
 * `npm run lint:migrations` (part of `npm test`): refuses a migration added since the previous
 * release that drops, renames or retypes what that release's code still uses, unless it is marked
 * `-- contract: <reason>`; prints what the upgrade from that release needs. Exit 0 passed, 1
 * refused, 2 cannot check (no git history). `--migrations <dir>` checks another folder of
 * migrations than server/store/migrations. The rules are in scripts/migration-lint.ts;
 * docs/operators.md ("Upgrades") says what they mean for operators.
 */
import { parseArgs } from "node:util";
import { ROOT } from "./docs-paths.ts";
import { checkMigrations, describeReport, MigrationLintError } from "./migration-lint.ts";

const { values } = parseArgs({ options: { migrations: { type: "string" } } });
try {
  const report = await checkMigrations({
    root: ROOT,
    ...(values.migrations ? { migrationsDir: values.migrations } : {}),
  });
  const { lines, passed } = describeReport(report);
  for (const line of lines) (passed ? console.log : console.error)(line);
  process.exitCode = passed ? 0 : 1;
} catch (error) {
  if (!(error instanceof MigrationLintError)) throw error;
  console.error(`lint:migrations cannot check: ${error.message}`);
  process.exitCode = 2;
}
