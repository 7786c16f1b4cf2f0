/**
 * The check behind `npm run lint:migrations`: the migrations added since the previous release,
 * parsed by PostgreSQL's own parser (libpg-query), against the SQL the previous release's server
 * code runs (read from git at that release's commit). A rolling upgrade runs both releases on one
 * database, and a rollback without a restore runs the previous one on a database the new one
 * migrated; so a migration may not take away what the previous release still uses:
 *
 * - a table it names (DROP TABLE, ALTER TABLE … RENAME TO);
 * - a column it names, or of a table it reads whole (`*`, `t.*`, `to_jsonb(t)`): DROP COLUMN,
 *   RENAME COLUMN, ALTER COLUMN … TYPE;
 * - the unique index or constraint an `ON CONFLICT (…)` of it relies on (dropped, renamed, or
 *   replaced by one on other columns or with another predicate);
 * - room for its inserts: a column added NOT NULL without a default to a table it inserts into.
 *
 * A migration may do so on purpose when it says why on a `-- contract: <reason>` line before its
 * first statement: the check accepts it and reports it, the release then needs the previous
 * release's processes stopped before its own start, and older code refuses a database it migrated
 * (server/store/migrate.ts). Besides, a released migration may not be removed or changed (a
 * database that applied it would never see the change).
 *
 * The previous release: the git tag `v<version>` of the newest version in contract/released/
 * below package.json's version, or, without that tag, the commit that added
 * contract/released/<version>.yaml (the release commit). Without git history the check cannot
 * read that release's code, and fails saying so.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseSql } from "libpg-query";
import semver from "semver";
import ts from "typescript";
import { contractReason, splitStatements } from "../server/store/migrate.ts";

/** Releases from this one on prepare statements again when a column is added under them (store/postgres-database.ts). */
export const TOLERATES_ADDED_COLUMNS_SINCE = "1.5.0";

const MIGRATIONS = "server/store/migrations";

export interface Release {
  version: string;
  commit: string;
  /** How the commit was found: the tag, or the commit that added the released contract. */
  found: string;
}

export interface Finding {
  migration: string;
  /** What the migration does, e.g. `drops column members.email`. */
  change: string;
  /** Where the previous release uses it: file and a line of its SQL. */
  usedBy: string[];
}

export interface MigrationReport {
  previous: Release;
  current: string;
  /** The migrations added since the previous release, in the order they apply. */
  added: string[];
  /** Changes the previous release's code would fail on, in migrations not marked contracting. */
  refused: Finding[];
  /** Migrations marked `-- contract:`, with their reason and what the check found in them. */
  contracting: { migration: string; reason: string; findings: Finding[] }[];
  /** Released migrations removed or changed since. */
  rewritten: string[];
  /**
   * Columns added to tables the previous release reads whole through prepared statements: a
   * release before TOLERATES_ADDED_COLUMNS_SINCE fails on them until restarted.
   */
  addedUnderPreparedStar: Finding[];
}

export class MigrationLintError extends Error {
  override name = "MigrationLintError";
}

type Node = Record<string, unknown>;

function git(root: string, args: string[]): string {
  return execFileSync("git", args, {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 << 20,
  });
}

/** The version package.json names. */
export function currentVersion(root: string): string {
  return (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
}

/** The versions frozen in contract/released/, newest first. */
export function releasedVersions(root: string): string[] {
  return readdirSync(join(root, "contract/released"))
    .map((name) => /^(\d+\.\d+\.\d+)\.yaml$/.exec(name)?.[1])
    .filter((version): version is string => version !== undefined)
    .sort(semver.rcompare);
}

/** The previous release of the version package.json names: see the file's comment. */
export function previousRelease(root: string): Release {
  const current = currentVersion(root);
  const version = releasedVersions(root).find((version) => semver.lt(version, current));
  if (!version) throw new MigrationLintError(`no release before ${current} in contract/released/`);
  return releaseCommit(root, version);
}

/** The commit of a released version: the git tag `v<version>`, or the commit that added its contract. */
export function releaseCommit(root: string, version: string): Release {
  try {
    git(root, ["rev-parse", "--git-dir"]);
  } catch {
    throw new MigrationLintError(
      `${root} is not a git checkout: the previous release's code (${version}) is read from git history. Run the check in a clone.`,
    );
  }
  if (git(root, ["rev-parse", "--is-shallow-repository"]).trim() === "true")
    throw new MigrationLintError(
      `the clone is shallow: the previous release's code (${version}) may be missing from it. Fetch the history (git fetch --unshallow).`,
    );
  const tag = `v${version}`;
  if (git(root, ["tag", "-l", tag]).trim() === tag) {
    return { version, commit: git(root, ["rev-list", "-n", "1", tag]).trim(), found: `tag ${tag}` };
  }
  const added = git(root, ["log", "--diff-filter=A", "--format=%H", "--", `contract/released/${version}.yaml`])
    .trim()
    .split("\n")
    .filter(Boolean)
    .at(-1);
  if (!added)
    throw new MigrationLintError(
      `contract/released/${version}.yaml is in no commit: the previous release (${version}) cannot be found in git history.`,
    );
  return { version, commit: added, found: `the commit that added contract/released/${version}.yaml` };
}

// ---------------------------------------------------------------- the schema, from the migrations

interface Index {
  table: string;
  columns: string[];
  unique: boolean;
  /** The partial index's predicate, as a parse tree without positions (JSON), or null. */
  predicate: string | null;
}

const list = (value: unknown): Node[] => (Array.isArray(value) ? (value as Node[]) : []);
const node = (value: unknown, type: string): Node | undefined =>
  (value as Node | undefined)?.[type] as Node | undefined;
const text = (value: unknown): string => String(node(value, "String")?.sval ?? "");
const relname = (stmt: Node): string => String((stmt.relation as Node | undefined)?.relname ?? "");

/** A parse tree with the positions taken out, so two spellings of one expression compare equal. */
function shape(tree: unknown): string | null {
  if (tree === undefined || tree === null) return null;
  return JSON.stringify(tree, (key, value) => (key === "location" ? undefined : value));
}

async function statementsOf(sql: string, where: string): Promise<Node[]> {
  try {
    return ((await parseSql(sql)).stmts ?? []).map((entry) => entry.stmt as unknown as Node);
  } catch (error) {
    throw new MigrationLintError(`${where} does not parse: ${(error as Error).message}`);
  }
}

/** Unique indexes and constraints by name, as the migrations so far made them. */
class Schema {
  readonly indexes = new Map<string, Index>();

  apply(stmt: Node): void {
    const create = node(stmt, "CreateStmt");
    if (create) {
      const table = relname(create);
      for (const element of list(create.tableElts)) {
        const column = node(element, "ColumnDef");
        if (column) {
          for (const constraint of list(column.constraints))
            this.#constraint(table, node(constraint, "Constraint")!, [String(column.colname)]);
        }
        const constraint = node(element, "Constraint");
        if (constraint) this.#constraint(table, constraint);
      }
    }
    const index = node(stmt, "IndexStmt");
    if (index?.idxname) {
      this.indexes.set(String(index.idxname), {
        table: relname(index),
        columns: list(index.indexParams).map((param) => String(node(param, "IndexElem")?.name ?? "(expression)")),
        unique: index.unique === true,
        predicate: shape(index.whereClause),
      });
    }
    const alter = node(stmt, "AlterTableStmt");
    if (alter) {
      for (const cmd of list(alter.cmds).map((entry) => node(entry, "AlterTableCmd")!)) {
        if (cmd.subtype === "AT_AddConstraint") this.#constraint(relname(alter), node(cmd.def, "Constraint")!);
        if (cmd.subtype === "AT_DropConstraint") this.indexes.delete(String(cmd.name));
      }
    }
    const drop = node(stmt, "DropStmt");
    if (drop?.removeType === "OBJECT_INDEX") {
      for (const object of list(drop.objects)) this.indexes.delete(list(node(object, "List")?.items).map(text).at(-1)!);
    }
    if (drop?.removeType === "OBJECT_TABLE") {
      const tables = new Set(list(drop.objects).map((object) => list(node(object, "List")?.items).map(text).at(-1)));
      for (const [name, index] of this.indexes) if (tables.has(index.table)) this.indexes.delete(name);
    }
    const rename = node(stmt, "RenameStmt");
    if (rename && (rename.renameType === "OBJECT_INDEX" || rename.renameType === "OBJECT_TABCONSTRAINT")) {
      const from = rename.renameType === "OBJECT_INDEX" ? relname(rename) : String(rename.subname);
      const index = this.indexes.get(from);
      if (index) {
        this.indexes.delete(from);
        this.indexes.set(String(rename.newname), index);
      }
    }
  }

  /** PostgreSQL's names: `<table>_pkey`, `<table>_<columns>_key`. */
  #constraint(table: string, constraint: Node, columns?: string[]): void {
    if (constraint.contype !== "CONSTR_PRIMARY" && constraint.contype !== "CONSTR_UNIQUE") return;
    const keys = columns ?? list(constraint.keys).map(text);
    const name =
      (constraint.conname as string | undefined) ??
      (constraint.contype === "CONSTR_PRIMARY" ? `${table}_pkey` : `${table}_${keys.join("_")}_key`);
    this.indexes.set(name, { table, columns: keys, unique: true, predicate: null });
  }
}

/** The unique index an `ON CONFLICT (columns) WHERE predicate` would take as its arbiter, among `indexes`. */
function arbiter(indexes: Map<string, Index>, conflict: OnConflict): string | undefined {
  const wanted = [...conflict.columns].sort().join(",");
  for (const [name, index] of indexes) {
    if (!index.unique || index.table !== conflict.table || [...index.columns].sort().join(",") !== wanted) continue;
    if (index.predicate === null || index.predicate === conflict.predicate) return name;
  }
  return undefined;
}

// ---------------------------------------------------------------- the previous release's SQL

/** One SQL text of the previous release's code: a string or template literal, `${…}` left as a gap. */
interface SqlText {
  file: string;
  line: number;
  sql: string;
  /** Lower-case words: the tables, columns and aliases it names (this code writes keywords in capitals). */
  names: Set<string>;
  /** It reads some table whole: `SELECT *`, `RETURNING *`, `t.*`, `to_jsonb(t)`. */
  star: boolean;
  /** Part of a statement built from several texts (it has a `${…}` gap). */
  fragment: boolean;
}

const LOOKS_LIKE_SQL = /\b(SELECT|INSERT INTO|UPDATE|DELETE FROM|ON CONFLICT|RETURNING)\b/;
const STAR =
  /\b(?:SELECT|RETURNING)\s+(?:DISTINCT\s+)?\*(?!\s+FROM\s+unnest\b)|[a-z_][a-z0-9_]*\.\*|\bto_jsonb\(\s*[a-z_][a-z0-9_]*\s*\)/;

function sqlTexts(file: string, source: string): SqlText[] {
  const found: SqlText[] = [];
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const visit = (current: ts.Node): void => {
    let sql: string | undefined;
    let fragment = false;
    if (ts.isStringLiteral(current) || ts.isNoSubstitutionTemplateLiteral(current)) sql = current.text;
    else if (ts.isTemplateExpression(current)) {
      sql = current.head.text + current.templateSpans.map((span) => ` __gap__ ${span.literal.text}`).join("");
      fragment = true;
    }
    if (sql !== undefined && LOOKS_LIKE_SQL.test(sql)) {
      const unquoted = sql.replace(/'(?:[^']|'')*'/g, "''");
      found.push({
        file,
        line: tree.getLineAndCharacterOfPosition(current.getStart()).line + 1,
        sql,
        names: new Set(unquoted.match(/\b[a-z_][a-z0-9_]*\b/g) ?? []),
        star: STAR.test(unquoted),
        fragment,
      });
      return;
    }
    ts.forEachChild(current, visit);
  };
  visit(tree);
  return found;
}

/** The server code of a commit: every TypeScript file under server/ but the tests and test helpers. */
function releaseSql(root: string, commit: string): SqlText[] {
  const files = git(root, ["ls-tree", "-r", "--name-only", commit, "server/"])
    .split("\n")
    .filter(
      (path) =>
        path.endsWith(".ts") &&
        !path.endsWith(".test.ts") &&
        !path.startsWith("server/tests/") &&
        !path.startsWith("server/testing/"),
    );
  return files.flatMap((path) => sqlTexts(path, git(root, ["show", `${commit}:${path}`])));
}

const where = (sql: SqlText) => `${sql.file}:${sql.line}: ${sql.sql.replace(/\s+/g, " ").trim().slice(0, 100)}`;

/** The texts that name a table. */
function naming(texts: SqlText[], table: string): SqlText[] {
  return texts.filter((sql) => sql.names.has(table));
}

/**
 * The texts that read a table whole: those that name it and read something whole, and the
 * fragments of its files that read something whole (`SELECT d.*, … FROM (${sql}) d`: the table
 * is in another text of the same file, which makes one statement with it).
 */
function readingWhole(texts: SqlText[], table: string): SqlText[] {
  const files = new Set(naming(texts, table).map((sql) => sql.file));
  return texts.filter((sql) => sql.star && (sql.names.has(table) || (sql.fragment && files.has(sql.file))));
}

/** The texts that use a column of a table: name both, or read the table whole. */
function usingColumn(texts: SqlText[], table: string, column: string): SqlText[] {
  const whole = new Set(readingWhole(texts, table));
  return texts.filter((sql) => whole.has(sql) || (sql.names.has(table) && sql.names.has(column)));
}

interface OnConflict {
  sql: SqlText;
  table: string;
  columns: string[];
  predicate: string | null;
  constraint?: string;
}

async function onConflicts(texts: SqlText[]): Promise<OnConflict[]> {
  const found: OnConflict[] = [];
  for (const sql of texts) {
    const match =
      /INSERT INTO\s+([a-z_][a-z0-9_]*)[\s\S]*?ON CONFLICT\s*(?:ON CONSTRAINT\s+([a-z_][a-z0-9_]*)|\(([^)]*)\)(?:\s+WHERE\s+([\s\S]+?))?\s+DO\b)/.exec(
        sql.sql,
      );
    if (!match) continue;
    const [, table, constraint, columns, predicate] = match;
    let shaped: string | null = null;
    if (predicate) {
      const [select] = await statementsOf(`SELECT 1 FROM x WHERE ${predicate}`, where(sql));
      shaped = shape(node(select, "SelectStmt")?.whereClause);
    }
    found.push({
      sql,
      table: table!,
      columns: (columns ?? "")
        .split(",")
        .map((column) => column.trim())
        .filter(Boolean),
      predicate: shaped,
      ...(constraint ? { constraint } : {}),
    });
  }
  return found;
}

// ---------------------------------------------------------------- the check

interface Options {
  root: string;
  /** The migrations of the release being made (default: the root's). */
  migrationsDir?: string;
  previous?: Release;
}

export async function checkMigrations({ root, migrationsDir = join(root, MIGRATIONS), previous }: Options) {
  const release = previous ?? previousRelease(root);
  const current = currentVersion(root);
  const released = git(root, ["ls-tree", "--name-only", release.commit, `${MIGRATIONS}/`])
    .split("\n")
    .filter((path) => path.endsWith(".sql"))
    .map((path) => path.slice(MIGRATIONS.length + 1));
  const names = readdirSync(migrationsDir)
    .filter((name) => name.endsWith(".sql"))
    .sort();
  const sources = new Map(names.map((name) => [name, readFileSync(join(migrationsDir, name), "utf8")]));

  const rewritten: string[] = [];
  for (const name of released) {
    const before = splitStatements(git(root, ["show", `${release.commit}:${MIGRATIONS}/${name}`]));
    const now = sources.get(name);
    if (now === undefined) rewritten.push(`${name}: removed`);
    else if (JSON.stringify(splitStatements(now)) !== JSON.stringify(before)) rewritten.push(`${name}: changed`);
  }

  const schema = new Schema();
  for (const name of released.filter((name) => sources.has(name)).sort())
    for (const stmt of await statementsOf(sources.get(name)!, name)) schema.apply(stmt);

  const texts = releaseSql(root, release.commit);
  const conflicts = await onConflicts(texts);
  const inserts = (table: string) => texts.filter((sql) => new RegExp(`INSERT INTO\\s+${table}\\b`).test(sql.sql));
  const tolerates = semver.gte(release.version, TOLERATES_ADDED_COLUMNS_SINCE);

  const added = names.filter((name) => !released.includes(name));
  const report: MigrationReport = {
    previous: release,
    current,
    added,
    refused: [],
    contracting: [],
    rewritten,
    addedUnderPreparedStar: [],
  };
  for (const migration of added) {
    const findings: Finding[] = [];
    const finding = (change: string, usedBy: SqlText[]) => {
      if (usedBy.length > 0) findings.push({ migration, change, usedBy: usedBy.map(where) });
    };
    for (const stmt of await statementsOf(sources.get(migration)!, migration)) {
      const drop = node(stmt, "DropStmt");
      if (drop?.removeType === "OBJECT_TABLE") {
        for (const object of list(drop.objects)) {
          const table = list(node(object, "List")?.items).map(text).at(-1)!;
          finding(`drops table ${table}`, naming(texts, table));
        }
      }
      const rename = node(stmt, "RenameStmt");
      if (rename?.renameType === "OBJECT_TABLE")
        finding(`renames table ${relname(rename)}`, naming(texts, relname(rename)));
      if (rename?.renameType === "OBJECT_COLUMN")
        finding(
          `renames column ${relname(rename)}.${String(rename.subname)}`,
          usingColumn(texts, relname(rename), String(rename.subname)),
        );
      const alter = node(stmt, "AlterTableStmt");
      for (const cmd of list(alter?.cmds).map((entry) => node(entry, "AlterTableCmd")!)) {
        const table = relname(alter!);
        if (cmd.subtype === "AT_DropColumn")
          finding(`drops column ${table}.${String(cmd.name)}`, usingColumn(texts, table, String(cmd.name)));
        if (cmd.subtype === "AT_AlterColumnType")
          finding(
            `changes the type of column ${table}.${String(cmd.name)}`,
            usingColumn(texts, table, String(cmd.name)),
          );
        if (cmd.subtype === "AT_AddColumn") {
          const column = node(cmd.def, "ColumnDef")!;
          const constraints = list(column.constraints).map((entry) => node(entry, "Constraint")?.contype);
          const required = constraints.includes("CONSTR_NOTNULL") || constraints.includes("CONSTR_PRIMARY");
          const defaulted = constraints.includes("CONSTR_DEFAULT") || constraints.includes("CONSTR_IDENTITY");
          if (required && !defaulted)
            finding(`adds column ${table}.${String(column.colname)} NOT NULL without a default`, inserts(table));
          const whole = tolerates ? [] : readingWhole(texts, table);
          if (whole.length > 0) {
            const change = `adds columns to ${table}:`;
            const entry = report.addedUnderPreparedStar.find(
              (seen) => seen.migration === migration && seen.change.startsWith(change),
            );
            if (entry) entry.change += `, ${String(column.colname)}`;
            else
              report.addedUnderPreparedStar.push({
                migration,
                change: `${change} ${String(column.colname)}`,
                usedBy: whole.map(where),
              });
          }
        }
      }
      // What an ON CONFLICT of the previous release needs, checked after each statement.
      const before = new Map(schema.indexes);
      schema.apply(stmt);
      for (const conflict of conflicts) {
        if (conflict.constraint) {
          if (before.has(conflict.constraint) && !schema.indexes.has(conflict.constraint))
            finding(`drops or renames constraint ${conflict.constraint}`, [conflict.sql]);
          continue;
        }
        if (conflict.columns.length === 0) continue;
        const had = arbiter(before, conflict);
        if (had && !arbiter(schema.indexes, conflict))
          finding(
            `drops or replaces ${had}, the unique index of ON CONFLICT (${conflict.columns.join(", ")}) on ${conflict.table}`,
            [conflict.sql],
          );
      }
    }
    const reason = contractReason(sources.get(migration)!);
    if (reason !== null) report.contracting.push({ migration, reason, findings });
    else report.refused.push(...findings);
  }
  return report;
}

/** The report as lines for a terminal, and whether the check passed. */
export function describeReport(report: MigrationReport): { lines: string[]; passed: boolean } {
  const { previous, current } = report;
  const lines = [
    `lint:migrations: ${report.added.length} migration(s) added since ${previous.version} (${previous.commit.slice(0, 7)}, ${previous.found}): ${report.added.join(", ") || "none"}`,
  ];
  const usedBy = (finding: Finding) => finding.usedBy.map((line) => `      used by ${line}`);
  for (const finding of report.refused)
    lines.push(
      `  refused: ${finding.migration} ${finding.change}, which ${previous.version} still uses:`,
      ...usedBy(finding),
    );
  for (const line of report.rewritten)
    lines.push(`  refused: released migration ${line} (a database that applied it never sees the change)`);
  for (const { migration, reason, findings } of report.contracting) {
    lines.push(`  contracting (marked): ${migration}: ${reason}`);
    for (const finding of findings) lines.push(`    ${finding.change}`, ...usedBy(finding));
  }
  for (const finding of report.addedUnderPreparedStar)
    lines.push(
      `  stop-then-start: ${finding.migration} ${finding.change}, read whole by ${previous.version}'s prepared statements:`,
      ...usedBy(finding),
    );
  const passed = report.refused.length === 0 && report.rewritten.length === 0;
  if (!passed) {
    lines.push(
      "lint:migrations failed: write the migration expand-only (add the new beside the old; drop the old in a later release, once no released code reads it),",
      "or mark it contracting on purpose with a `-- contract: <reason>` line before its first statement (the release then needs the older processes stopped first, and a rollback needs a restore).",
    );
  } else if (report.contracting.length > 0 || report.addedUnderPreparedStar.length > 0) {
    lines.push(
      `lint:migrations passed; upgrading from ${previous.version} to ${current} needs the ${previous.version} processes stopped before the first ${current} process starts (the lines above).`,
    );
  } else {
    lines.push(
      `lint:migrations passed: ${current} upgrades from ${previous.version} by starting the new processes, then stopping the old ones, and rolls back without a restore.`,
    );
  }
  return { lines, passed };
}
