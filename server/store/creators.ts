import { readFileSync } from "node:fs";
import type { Queryable } from "./database.ts";
import type { Creator } from "../domain/types.ts";

/** The stock catalogue, committed as data (made once by scripts/make-creators.ts). */
export function stockCreators(): Creator[] {
  return JSON.parse(readFileSync(new URL("../data/creators.json", import.meta.url), "utf8")) as Creator[];
}

/** Upserts the stock catalogue so a release that edits it updates existing databases. */
export async function seedCreators(db: Queryable, creators: Creator[] = stockCreators()): Promise<void> {
  for (const creator of creators) {
    await db.query(
      `INSERT INTO creators (id, name, status, languages, style, personality, vibe, consent, photo)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (id) DO UPDATE SET name = $2, status = $3, languages = $4, style = $5, personality = $6,
                                      vibe = $7, consent = $8, photo = $9`,
      [
        creator.id,
        creator.name,
        creator.status,
        creator.languages,
        creator.style,
        creator.personality,
        creator.vibe,
        creator.consent,
        creator.photo,
      ],
    );
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
