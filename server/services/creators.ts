import type { Queryable } from "../store/database.ts";
import { listCreators } from "../store/creators.ts";
import type { Creator } from "../domain/types.ts";

/** The AI hosts a stream can be started with (GET /creators), by name. */
export function creatorCatalogue(db: Queryable): Promise<Creator[]> {
  return listCreators(db);
}
