/** The brands' audit log: who changed what, when and from where; owners read it filtered and paged. */
import { AUDIT_LOG, type AuditAction, type AuditEntry } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import { insertRow, readRow } from "./statements.ts";

export async function insertAuditEntry(db: Queryable, entry: AuditEntry): Promise<void> {
  const { text, params } = insertRow(AUDIT_LOG, entry);
  await db.query(text, params);
}

/** The owners' filters of the audit log: one action, what one member did, or both. */
export interface AuditFilter {
  action?: AuditAction | undefined;
  memberId?: string | undefined;
}

function auditWhere(brandId: string, filter: AuditFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [brandId];
  let where = "brand_id = $1";
  if (filter.action) where += ` AND action = $${params.push(filter.action)}`;
  if (filter.memberId) where += ` AND member_id = $${params.push(filter.memberId)}`;
  return { where, params };
}

/** One page of the brand's entries matching `filter`, newest first. */
export async function listAuditEntries(
  db: Queryable,
  brandId: string,
  filter: AuditFilter,
  { limit, offset }: { limit: number; offset: number },
): Promise<AuditEntry[]> {
  const { where, params } = auditWhere(brandId, filter);
  const rows = await db.query(
    `SELECT * FROM audit_log WHERE ${where} ORDER BY at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  return rows.map((row) => readRow(AUDIT_LOG, row));
}

/** How many of the brand's entries match `filter` (the list's `total`). */
export async function countAuditEntries(db: Queryable, brandId: string, filter: AuditFilter): Promise<number> {
  const { where, params } = auditWhere(brandId, filter);
  const [row] = await db.query<{ count: string | number }>(
    `SELECT count(*) AS count FROM audit_log WHERE ${where}`,
    params,
  );
  return Number(row?.count ?? 0);
}
