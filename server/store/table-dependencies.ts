/**
 * Which tables a statement may touch, worked out from the names it mentions and the schema's own
 * catalogue: the embedded database's read cache (store/database.ts) uses it so that a write
 * forgets only the cached reads of the tables it can have changed (a new stream does not make
 * every request read its API key again), instead of the whole cache.
 *
 * It over-approximates on purpose, which keeps it exact for the cache: every table a statement
 * names counts, read or written, and so does every table reachable from it through
 * - the triggers on a table (their functions' bodies),
 * - foreign keys (a delete or update of a referenced row may cascade to the referencing table),
 * - functions the statement or a function body calls (their bodies, transitively).
 * A statement that names no known table or function depends on everything.
 */
export interface CatalogRows {
  tables: Array<{ name: string }>;
  functions: Array<{ name: string; body: string }>;
  triggers: Array<{ table: string; function: string }>;
  foreignKeys: Array<{ referenced: string; referencing: string }>;
}

/** The catalogue queries, over the schema the server's tables live in (`public`). */
export const CATALOG_QUERIES = {
  tables: `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm')`,
  functions: `SELECT p.proname AS name, coalesce(p.prosrc, '') AS body FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = 'public'`,
  triggers: `SELECT c.relname AS table, p.proname AS function FROM pg_trigger t
             JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'public' AND NOT t.tgisinternal`,
  foreignKeys: `SELECT referenced.relname AS referenced, referencing.relname AS referencing FROM pg_constraint k
                JOIN pg_class referenced ON referenced.oid = k.confrelid JOIN pg_class referencing ON referencing.oid = k.conrelid
                JOIN pg_namespace n ON n.oid = referencing.relnamespace
                WHERE k.contype = 'f' AND n.nspname = 'public'`,
} as const;

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_$]*/g;
/** Statement texts remembered at most: ours are constants, so a few hundred. */
const REMEMBERED_STATEMENTS = 2_000;

function identifiers(text: string): Set<string> {
  return new Set(text.match(IDENTIFIER)?.map((name) => name.toLowerCase()) ?? []);
}

export class TableDependencies {
  readonly #tables: ReadonlySet<string>;
  /** Node (`t:name` or `f:name`) → the nodes it reaches in one step. */
  readonly #edges = new Map<string, Set<string>>();
  readonly #functions: ReadonlySet<string>;
  readonly #byStatement = new Map<string, ReadonlySet<string> | null>();

  constructor(catalog: CatalogRows) {
    this.#tables = new Set(catalog.tables.map((table) => table.name.toLowerCase()));
    this.#functions = new Set(catalog.functions.map((fn) => fn.name.toLowerCase()));
    const edge = (from: string, to: string) => {
      let targets = this.#edges.get(from);
      if (!targets) this.#edges.set(from, (targets = new Set()));
      targets.add(to);
    };
    for (const trigger of catalog.triggers) edge(`t:${trigger.table.toLowerCase()}`, `f:${trigger.function.toLowerCase()}`);
    for (const key of catalog.foreignKeys) edge(`t:${key.referenced.toLowerCase()}`, `t:${key.referencing.toLowerCase()}`);
    for (const fn of catalog.functions) {
      for (const node of this.#namedNodes(identifiers(fn.body))) edge(`f:${fn.name.toLowerCase()}`, node);
    }
  }

  #namedNodes(names: Iterable<string>): string[] {
    const nodes: string[] = [];
    for (const name of names) {
      if (this.#tables.has(name)) nodes.push(`t:${name}`);
      if (this.#functions.has(name)) nodes.push(`f:${name}`);
    }
    return nodes;
  }

  /** The tables `sql` may read or change, or null when it names none this schema knows (then: all). */
  tablesOf(sql: string): ReadonlySet<string> | null {
    const known = this.#byStatement.get(sql);
    if (known !== undefined) return known;
    const seen = new Set<string>(this.#namedNodes(identifiers(sql)));
    const queue = [...seen];
    while (queue.length > 0) {
      for (const next of this.#edges.get(queue.pop()!) ?? []) {
        if (!seen.has(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
    const tables = new Set([...seen].filter((node) => node.startsWith("t:")).map((node) => node.slice(2)));
    const result = tables.size > 0 ? tables : null;
    if (this.#byStatement.size >= REMEMBERED_STATEMENTS) this.#byStatement.clear();
    this.#byStatement.set(sql, result);
    return result;
  }
}

/** Whether two statements' table sets meet; null (unknown) meets everything. */
export function overlaps(a: ReadonlySet<string> | null, b: ReadonlySet<string> | null): boolean {
  if (a === null || b === null) return true;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const table of small) if (large.has(table)) return true;
  return false;
}
