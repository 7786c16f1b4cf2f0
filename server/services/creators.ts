import type { Queryable } from "../store/database.ts";
import { type Creator, listCreators } from "../store/creators.ts";

/** The AI hosts a stream can be started with (GET /creators), by name. */
export function creatorCatalogue(db: Queryable): Promise<Creator[]> {
  return listCreators(db);
}
