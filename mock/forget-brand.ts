/**
 * Removes a brand and every row that belongs to it, for the dynamic mock, which keeps a bounded
 * number of keys (mock/keys.ts). The server never deletes a brand, so nothing in its schema
 * cascades; what belongs to a brand is read from the schema itself, so a table a later migration
 * adds is covered without a change here: a row belongs to the brand when one of its columns
 * refers to a row that does, by a foreign key or by the schema's naming (`brand_id` → `brands`,
 * `api_key_id` → `api_keys`, `stream_id` → `streams`: columns some tables keep without a foreign
 * key, the rate-limit windows and the request log among them).
 */
import type { Database, Queryable } from "../server/store/database.ts";
import { changingKeys } from "../server/store/request-windows.ts";

interface Reference {
  table: string;
  column: string;
  parent: string;
  parentColumn: string;
}

/** Every reference between the schema's tables: foreign keys of one column, and `<name>_id` columns of a table `<name>s` with an `id`. */
async function references(db: Queryable): Promise<Reference[]> {
  const foreign = await db.query<Reference>(
    `SELECT c.conrelid::regclass::text AS table, a.attname AS column,
            c.confrelid::regclass::text AS parent, pa.attname AS "parentColumn"
     FROM pg_constraint c
     JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
     JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = c.confkey[1]
     WHERE c.contype = 'f' AND cardinality(c.conkey) = 1 AND c.connamespace = 'public'::regnamespace`,
  );
  const named = await db.query<Reference>(
    `SELECT col.table_name AS table, col.column_name AS column, parent.table_name AS parent, 'id' AS "parentColumn"
     FROM information_schema.columns col
     JOIN information_schema.columns parent
       ON parent.table_schema = 'public' AND parent.column_name = 'id'
      AND parent.table_name = left(col.column_name, -3) || 's'
      AND parent.data_type = col.data_type
     WHERE col.table_schema = 'public' AND col.column_name LIKE '%\\_id' AND col.table_name <> parent.table_name`,
  );
  const seen = new Set<string>();
  return [...foreign, ...named].filter((reference) => {
    const id = `${reference.table}.${reference.column}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/**
 * The statements that remove a brand (`$1`), children before their parents: each deletes the
 * rows of one table that refer to a row of the brand's, in a table not yet emptied of them.
 */
export async function brandRemoval(db: Queryable): Promise<string[]> {
  const all = await references(db);
  const conditions = new Map<string, string>([["brands", "id = $1"]]);
  const order: string[] = [];
  const visiting = new Set<string>();
  // Depth first from `brands` along the references to it: a table is emitted after every table
  // that refers to it, so its rows are still there while those tables' conditions read them.
  const visit = (table: string) => {
    if (visiting.has(table) || order.includes(table)) return;
    visiting.add(table);
    for (const child of new Set(all.filter((reference) => reference.parent === table).map(({ table }) => table)))
      visit(child);
    order.push(table);
  };
  visit("brands");
  // Conditions parents first (the reverse of the deletion order), each naming its parents' rows.
  for (const table of order.toReversed()) {
    if (conditions.has(table)) continue;
    const parts = all
      .filter((reference) => reference.table === table && conditions.has(reference.parent))
      .map(({ column, parent, parentColumn }) =>
        parent === "brands"
          ? `"${column}" = $1`
          : `"${column}" IN (SELECT "${parentColumn}" FROM "${parent}" WHERE ${conditions.get(parent)})`,
      );
    conditions.set(table, parts.map((part) => `(${part})`).join(" OR "));
  }
  return order.map((table) => `DELETE FROM "${table}" WHERE ${conditions.get(table)}`);
}

const removals = new WeakMap<Database, Promise<string[]>>();

/** Deletes the brand and everything of it, in one transaction; the key memo forgets its keys. */
export async function forgetBrand(db: Database, brandId: string): Promise<void> {
  let statements = removals.get(db);
  if (!statements) {
    statements = brandRemoval(db);
    removals.set(db, statements);
  }
  const plan = await statements;
  await changingKeys(db, () =>
    db.transaction(async (tx) => {
      for (const statement of plan) await tx.query(statement, [brandId]);
    }),
  );
}
