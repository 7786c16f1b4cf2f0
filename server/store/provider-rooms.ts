import { PROVIDER_ROOMS, type ProviderRoom, type StreamStatus } from "../domain/types.ts";
import type { Queryable } from "./database.ts";
import { insertRow, readRow, selectList, updateRows } from "./statements.ts";

/** A room the sweeper claimed: to be checked (its stream is active) or deleted (it is not). */
export interface ClaimedRoom extends ProviderRoom {
  streamStatus: StreamStatus;
}

const roomFromRow = (row: object): ProviderRoom => readRow(PROVIDER_ROOMS, row);

const ROOM_COLUMNS = selectList(PROVIDER_ROOMS, { alias: "r" });

export async function insertProviderRoom(
  db: Queryable,
  room: { streamId: string; brandId: string; roomName: string; checkAt: Date },
): Promise<void> {
  const { text, params } = insertRow(PROVIDER_ROOMS, room, "ON CONFLICT DO NOTHING");
  await db.query(text, params);
}

export async function lockProviderRoomByName(db: Queryable, roomName: string): Promise<ProviderRoom | null> {
  const rows = await db.query(`SELECT ${ROOM_COLUMNS} FROM provider_rooms r WHERE r.room_name = $1 FOR UPDATE`, [
    roomName,
  ]);
  return rows[0] ? roomFromRow(rows[0]) : null;
}

export async function lockProviderRoom(db: Queryable, streamId: string): Promise<ProviderRoom | null> {
  const rows = await db.query(`SELECT ${ROOM_COLUMNS} FROM provider_rooms r WHERE r.stream_id = $1 FOR UPDATE`, [
    streamId,
  ]);
  return rows[0] ? roomFromRow(rows[0]) : null;
}

/** Writes what is known of the agent, and when the sweeper should next ask about the room. */
export async function updateProviderRoom(db: Queryable, room: ProviderRoom, checkAt: Date): Promise<void> {
  const { agentIdentity, agentJoinedAt, agentLeftAt } = room;
  const { text, params } = updateRows(
    PROVIDER_ROOMS,
    { streamId: room.streamId },
    { agentIdentity, agentJoinedAt, agentLeftAt, checkAt },
  )!;
  await db.query(text, params);
}

export async function markRoomClosed(db: Queryable, streamId: string, at: Date): Promise<void> {
  await db.query("UPDATE provider_rooms SET closed_at = coalesce(closed_at, $2) WHERE stream_id = $1", [streamId, at]);
}

/**
 * Claims the room of a stream that is no longer active for deleting it now, unless it is closed
 * or another caller is already deleting it. Null when there is nothing to delete.
 */
export async function claimRoomToClose(
  db: Queryable,
  streamId: string,
  now: Date,
  retryAt: Date,
): Promise<string | null> {
  const rows = await db.query<{ room_name: string }>(
    `UPDATE provider_rooms SET close_tried_at = $2, check_at = $3
     WHERE stream_id = $1 AND closed_at IS NULL AND (close_tried_at IS NULL OR check_at <= $2)
     RETURNING room_name`,
    [streamId, now, retryAt],
  );
  return rows[0]?.room_name ?? null;
}

/**
 * Claims open rooms that need the room service: those whose check is due, and those whose stream
 * has left preparing/live and whose deletion was never tried. Claiming moves `check_at` to
 * `nextCheckAt`, so another process (or the next sweep) leaves them alone meanwhile; SKIP LOCKED
 * lets several processes claim at once.
 */
export async function claimRoomsToCheck(
  db: Queryable,
  now: Date,
  nextCheckAt: Date,
  limit: number,
): Promise<ClaimedRoom[]> {
  const rows = await db.query<{ status: StreamStatus }>(
    `UPDATE provider_rooms r SET check_at = $2,
            close_tried_at = CASE WHEN s.status IN ('preparing', 'live') THEN r.close_tried_at ELSE $1 END
     FROM streams s
     WHERE s.id = r.stream_id AND r.stream_id IN (
       SELECT c.stream_id FROM provider_rooms c JOIN streams cs ON cs.id = c.stream_id
       WHERE c.closed_at IS NULL
         AND (c.check_at <= $1 OR (cs.status NOT IN ('preparing', 'live') AND c.close_tried_at IS NULL))
       ORDER BY c.check_at LIMIT $3 FOR UPDATE OF c SKIP LOCKED)
     RETURNING ${ROOM_COLUMNS}, s.status`,
    [now, nextCheckAt, limit],
  );
  return rows.map((row) => ({ ...roomFromRow(row), streamStatus: row.status }));
}

/** Records a provider event id; false when it was already recorded (a duplicate or a replay). */
export async function recordProviderEvent(db: Queryable, id: string, at: Date): Promise<boolean> {
  const rows = await db.query(
    "INSERT INTO provider_webhook_events (id, received_at) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id",
    [id, at],
  );
  return rows.length > 0;
}

export async function forgetProviderEventsBefore(db: Queryable, before: Date): Promise<void> {
  await db.query("DELETE FROM provider_webhook_events WHERE received_at < $1", [before]);
}
