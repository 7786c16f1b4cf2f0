import type { Database, Queryable } from "../../server/store/database.ts";

/**
 * A Database that first passes every statement to a real one and keeps its answer by SQL text,
 * then, after answerFromMemory(), answers each statement at once with the rows last recorded for
 * that text, touching no database: the server's own pipeline with the database's work taken out.
 * A statement never recorded answers no rows (and is counted, so the bench can say so).
 */
export function stubDatabase(db: Database): Database & { answerFromMemory(): void; unknown(): number } {
  const answers = new Map<string, unknown[]>();
  let stubbed = false;
  let unknown = 0;
  const answer = async <Row>(target: Queryable, sql: string, params?: unknown[]): Promise<Row[]> => {
    if (stubbed) {
      const rows = answers.get(sql);
      if (!rows) unknown++;
      // Copies, so a caller that changes a row does not change the next request's answer.
      return (rows ?? []).map((row) => ({ ...(row as object) })) as Row[];
    }
    const rows = await target.query<Row>(sql, params);
    answers.set(sql, rows);
    return rows;
  };
  return {
    engine: db.engine,
    query: (sql, params) => answer(db, sql, params),
    transaction: (work) =>
      stubbed
        ? work({ query: (sql, params) => answer(db, sql, params) })
        : db.transaction((tx) => work({ query: (sql, params) => answer(tx, sql, params) })),
    exec: (sql) => (stubbed ? Promise.resolve() : db.exec(sql)),
    close: () => db.close(),
    poolStats: () => (stubbed ? { total: 1, idle: 1, waiting: 0 } : db.poolStats()),
    answerFromMemory: () => {
      stubbed = true;
    },
    unknown: () => unknown,
  };
}
