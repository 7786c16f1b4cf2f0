import { readFileSync } from "node:fs";
import type { Queryable } from "./database.ts";
import { named } from "./statements.ts";
import type { Creator } from "../domain/types.ts";

/** The stock catalogue, committed as data (made once by scripts/make-creators.ts). */
export function stockCreators(): Creator[] {
  return JSON.parse(readFileSync(new URL("../data/creators.json", import.meta.url), "utf8")) as Creator[];
}

const UPSERT_CREATOR = named<Creator>(
  `INSERT INTO creators (id, name, status, languages, style, personality, vibe, consent, photo)
   VALUES ($id, $name, $status, $languages, $style, $personality, $vibe, $consent, $photo)
   ON CONFLICT (id) DO UPDATE SET name = excluded.name, status = excluded.status, languages = excluded.languages,
     style = excluded.style, personality = excluded.personality, vibe = excluded.vibe, consent = excluded.consent,
     photo = excluded.photo`,
);

/** Upserts the stock catalogue so a release that edits it updates existing databases. */
export async function seedCreators(db: Queryable, creators: Creator[] = stockCreators()): Promise<void> {
  for (const creator of creators) {
    await db.query(UPSERT_CREATOR.text, UPSERT_CREATOR.params(creator));
  }
}

export async function listCreators(db: Queryable): Promise<Creator[]> {
  const rows = await db.query<Creator>(
    "SELECT id, name, status, languages, style, personality, vibe, consent, photo FROM creators",
  );
  // Sorted here rather than in SQL so the order does not depend on the database's collation.
  return rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
}

export async function creatorExists(db: Queryable, id: string): Promise<boolean> {
  return (await db.query("SELECT 1 FROM creators WHERE id = $1", [id])).length > 0;
}
