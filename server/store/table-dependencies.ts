import { READ_ONLY } from "./statement-kinds.ts";

/**
 * Which tables a statement reads and which it may change, worked out from its text and the
 * schema's own catalogue: the embedded database's read cache (store/database.ts) uses it so that
 * a write forgets only the cached reads of the tables it may have changed (a new stream does not
 * make every request read its API key again), instead of the whole cache.
 *
 * Both sides over-approximate, which keeps the cache exact:
 * - a read depends on every table it names, and on every table named in the functions it calls;
 * - a write may change the tables it inserts into, updates, deletes from or truncates, and then,
 *   transitively, what the triggers on those tables change, the tables whose foreign keys reference
 *   them (cascades), and what the functions it calls change.
 * Unknown means everything: a read that names no table, a read of a view, a write whose targets
 * are not known tables, and any function that runs dynamic SQL (`EXECUTE`).
 */
export interface CatalogRows {
  tables: Array<{ name: string; view: boolean }>;
  functions: Array<{ name: string; body: string; atomic?: boolean }>;
  triggers: Array<{ table: string; function: string }>;
  foreignKeys: Array<{ referenced: string; referencing: string }>;
  unsupported: Array<{ found: boolean }>;
}

/** The catalogue queries, over the schema the server's tables live in (`public`). */
export const CATALOG_QUERIES = {
  tables: `SELECT c.relname AS name, c.relkind IN ('v', 'm') AS view FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm')`,
  // A `BEGIN ATOMIC` body is not in prosrc: such a function counts as one that may write anything.
  functions: `SELECT p.proname AS name, coalesce(p.prosrc, '') AS body, p.prosqlbody IS NOT NULL AS atomic
              FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'`,
  triggers: `SELECT c.relname AS table, p.proname AS function FROM pg_trigger t
             JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'public' AND NOT t.tgisinternal`,
  foreignKeys: `SELECT referenced.relname AS referenced, referencing.relname AS referencing FROM pg_constraint k
                JOIN pg_class referenced ON referenced.oid = k.confrelid JOIN pg_class referencing ON referencing.oid = k.conrelid
                JOIN pg_namespace n ON n.oid = referencing.relnamespace
                WHERE k.contype = 'f' AND n.nspname = 'public'`,
  // Rules and table inheritance change rows the model above does not follow: with either, no model.
  unsupported: `SELECT EXISTS (SELECT 1 FROM pg_rules WHERE schemaname = 'public') OR EXISTS (SELECT 1 FROM pg_inherits) AS found`,
} as const;

/** Tables are known everywhere; everything else is a set of them, or null for "all". */
export type Tables = ReadonlySet<string> | null;

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_$]*/g;
/** The table a data-changing command acts on (a schema prefix and quotes allowed). */
const WRITE_TARGET = /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM|MERGE\s+INTO|TRUNCATE(?:\s+TABLE)?)\s+(?:ONLY\s+)?(?:"?[A-Za-z_][\w$]*"?\.)?"?([A-Za-z_][\w$]*)"?/gi;
const DYNAMIC_SQL = /\bEXECUTE\b(?!\s+(?:FUNCTION|PROCEDURE)\b)/i;
/** Statement texts remembered at most: ours are constants, so a few hundred. */
const REMEMBERED_STATEMENTS = 2_000;

const lower = (name: string) => name.toLowerCase();

function identifiers(text: string): Set<string> {
  return new Set(text.match(IDENTIFIER)?.map(lower) ?? []);
}

function writeTargets(text: string): Set<string> {
  return new Set([...text.matchAll(WRITE_TARGET)].map((match) => lower(match[1]!)));
}

interface FunctionFacts {
  /** Tables and functions its body names. */
  named: Set<string>;
  /** Tables it changes itself. */
  targets: Set<string>;
  dynamic: boolean;
}

export class TableDependencies {
  readonly #tables: ReadonlySet<string>;
  readonly #views: ReadonlySet<string>;
  readonly #functions = new Map<string, FunctionFacts>();
  readonly #triggers = new Map<string, string[]>();
  readonly #referencing = new Map<string, string[]>();
  readonly #reads = new Map<string, Tables>();
  readonly #writes = new Map<string, Tables>();

  constructor(catalog: CatalogRows) {
    this.#tables = new Set(catalog.tables.filter((table) => !table.view).map((table) => lower(table.name)));
    this.#views = new Set(catalog.tables.filter((table) => table.view).map((table) => lower(table.name)));
    for (const fn of catalog.functions) {
      const facts = this.#functions.get(lower(fn.name)) ?? { named: new Set(), targets: new Set(), dynamic: false };
      for (const name of identifiers(fn.body)) facts.named.add(name);
      for (const target of writeTargets(fn.body)) facts.targets.add(target);
      facts.dynamic ||= DYNAMIC_SQL.test(fn.body) || fn.atomic === true;
      this.#functions.set(lower(fn.name), facts);
    }
    const add = (map: Map<string, string[]>, key: string, value: string) => map.set(key, [...(map.get(key) ?? []), value]);
    for (const trigger of catalog.triggers) add(this.#triggers, lower(trigger.table), lower(trigger.function));
    for (const key of catalog.foreignKeys) add(this.#referencing, lower(key.referenced), lower(key.referencing));
  }

  /** The functions `names` reaches, through the functions their bodies name. */
  #functionsReached(names: Iterable<string>): FunctionFacts[] | null {
    const seen = new Set<string>();
    const queue = [...names].filter((name) => this.#functions.has(name));
    const reached: FunctionFacts[] = [];
    while (queue.length > 0) {
      const name = queue.pop()!;
      if (seen.has(name)) continue;
      seen.add(name);
      const facts = this.#functions.get(name)!;
      if (facts.dynamic) return null;
      reached.push(facts);
      for (const named of facts.named) if (this.#functions.has(named) && !seen.has(named)) queue.push(named);
    }
    return reached;
  }

  /** The tables a read depends on. */
  readsOf(sql: string): Tables {
    return this.#remembered(this.#reads, sql, () => {
      const names = identifiers(sql);
      const functions = this.#functionsReached(names);
      if (functions === null || [...names].some((name) => this.#views.has(name))) return null;
      const tables = new Set([...names].filter((name) => this.#tables.has(name)));
      for (const fn of functions) for (const name of fn.named) if (this.#tables.has(name)) tables.add(name);
      return tables.size > 0 ? tables : null;
    });
  }

  /**
   * The tables a statement may change. A SELECT changes only what the functions it calls change
   * (possibly nothing); any other statement whose targets are unknown may change everything.
   */
  changesOf(sql: string): Tables {
    return this.#remembered(this.#writes, sql, () => {
      const names = identifiers(sql);
      // A name after UPDATE that is no table is a keyword (`DO UPDATE SET`, `FOR UPDATE OF`) or a
      // table outside this schema, which no read of ours names without being unknown itself.
      const direct = [...writeTargets(sql)].filter((name) => this.#tables.has(name));
      const changed = new Set<string>();
      const functionsToVisit = new Set([...names].filter((name) => this.#functions.has(name)));
      const tablesToVisit = [...direct];
      const visitedFunctions = new Set<string>();
      while (tablesToVisit.length > 0 || functionsToVisit.size > 0) {
        for (const table of tablesToVisit.splice(0)) {
          if (changed.has(table)) continue;
          changed.add(table);
          for (const fn of this.#triggers.get(table) ?? []) functionsToVisit.add(fn);
          tablesToVisit.push(...(this.#referencing.get(table) ?? []));
        }
        for (const name of [...functionsToVisit]) {
          functionsToVisit.delete(name);
          if (visitedFunctions.has(name)) continue;
          visitedFunctions.add(name);
          // A trigger's function from another schema (pg_catalog's, say) is not known: it may write anything.
          const facts = this.#functions.get(name);
          if (!facts || facts.dynamic) return null;
          tablesToVisit.push(...[...facts.targets].filter((target) => this.#tables.has(target)));
          for (const named of facts.named) if (this.#functions.has(named)) functionsToVisit.add(named);
        }
      }
      if (changed.size === 0 && !READ_ONLY.test(sql)) return null;
      return changed;
    });
  }

  #remembered(cache: Map<string, Tables>, sql: string, work: () => Tables): Tables {
    const known = cache.get(sql);
    if (known !== undefined) return known;
    const result = work();
    if (cache.size >= REMEMBERED_STATEMENTS) cache.clear();
    cache.set(sql, result);
    return result;
  }
}

/** Whether two sets of tables meet; null (unknown) meets everything. */
export function overlaps(a: Tables, b: Tables): boolean {
  if (a === null || b === null) return true;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const table of small) if (large.has(table)) return true;
  return false;
}
