import { type StreamScope, WEBHOOKS, type Webhook } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import { insertRow, readRow } from "./statements.ts";

const webhookFromRow = (row: object): Webhook => readRow(WEBHOOKS, row);

export async function insertWebhook(db: Queryable, webhook: Webhook): Promise<void> {
  const { text, params } = insertRow(WEBHOOKS, webhook);
  await db.query(text, params);
}

/** The scope's webhooks not deleted: what the cap on registrations counts. */
export async function countWebhooks(db: Queryable, scope: StreamScope): Promise<number> {
  const [row] = await db.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM webhooks WHERE brand_id = $1 AND mode = $2 AND deleted_at IS NULL",
    [scope.brandId, scope.mode],
  );
  return Number(row?.count ?? 0);
}

/** The scope's webhooks not deleted, oldest first, at most `limit` of them. */
export async function listWebhooks(db: Queryable, scope: StreamScope, limit: number): Promise<Webhook[]> {
  const rows = await db.query(
    "SELECT * FROM webhooks WHERE brand_id = $1 AND mode = $2 AND deleted_at IS NULL ORDER BY created_at, id LIMIT $3",
    [scope.brandId, scope.mode, limit],
  );
  return rows.map(webhookFromRow);
}

export async function findWebhook(db: Queryable, scope: StreamScope, id: string): Promise<Webhook | null> {
  const rows = await db.query("SELECT * FROM webhooks WHERE id = $1 AND brand_id = $2 AND mode = $3", [
    id,
    scope.brandId,
    scope.mode,
  ]);
  return rows[0] ? webhookFromRow(rows[0]) : null;
}

/** Soft delete: past deliveries keep their webhook for the operator view. Unknown ids are a no-op. */
/** True when it deleted the webhook; false when the scope has no such webhook, or it was deleted before. */
export async function deleteWebhook(db: Queryable, scope: StreamScope, id: string, at: Date): Promise<boolean> {
  const rows = await db.query(
    "UPDATE webhooks SET deleted_at = $4 WHERE id = $1 AND brand_id = $2 AND mode = $3 AND deleted_at IS NULL RETURNING 1",
    [id, scope.brandId, scope.mode, at],
  );
  return rows.length > 0;
}
