-- GET /streams without a scan of the brand's streams: its totals come from stream_counts and its
-- pages from stream_positions, both kept by the triggers below in the same statement (and so the
-- same transaction) as every write to streams, whoever makes it (API, sweeper, operator, SQL).
--
-- stream_counts: one row per brand and mode, the number of its streams in each status.
-- stream_positions: each stream's place in its brand and mode's list, oldest first (0, 1, 2, …
-- by created_at, id); offset k of the newest-first list is position total − 1 − k, one index
-- look-up however deep the page.
--
-- Lock order: a write to streams locks, in its trigger, the rows of the brands it touches (in id
-- order) before their counts and positions, so writers of one brand are serialised on the brand
-- row as the wallet and concurrency checks already are, and always take brand before counts.
-- The triggers read with fresh snapshots, as READ COMMITTED (the default) gives them: writers
-- must not use REPEATABLE READ or SERIALIZABLE.

CREATE TABLE stream_counts (
  brand_id  uuid NOT NULL,
  mode      text NOT NULL,
  preparing bigint NOT NULL DEFAULT 0,
  live      bigint NOT NULL DEFAULT 0,
  ended     bigint NOT NULL DEFAULT 0,
  error     bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (brand_id, mode)
);

CREATE TABLE stream_positions (
  stream_id  uuid PRIMARY KEY,
  brand_id   uuid NOT NULL,
  mode       text NOT NULL,
  created_at timestamptz NOT NULL,
  position   bigint NOT NULL
);
CREATE INDEX stream_positions_list ON stream_positions (brand_id, mode, position);

-- A status-filtered list walks only the streams of that status.
CREATE INDEX streams_brand_mode_status_created ON streams (brand_id, mode, status, created_at DESC, id DESC);

INSERT INTO stream_counts (brand_id, mode, preparing, live, ended, error)
SELECT brand_id, mode, count(*) FILTER (WHERE status = 'preparing'), count(*) FILTER (WHERE status = 'live'),
       count(*) FILTER (WHERE status = 'ended'), count(*) FILTER (WHERE status = 'error')
FROM streams GROUP BY brand_id, mode;

INSERT INTO stream_positions (stream_id, brand_id, mode, created_at, position)
SELECT id, brand_id, mode, created_at, row_number() OVER (PARTITION BY brand_id, mode ORDER BY created_at, id) - 1
FROM streams;

-- Renumbers one brand and mode's list from the key (created_at, id) on: the positions before it
-- are untouched, the rest are written again from streams. A new stream is the newest almost
-- always, so only its own position is written.
CREATE FUNCTION stream_positions_from(list_brand uuid, list_mode text, from_created timestamptz, from_id uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  base bigint;
BEGIN
  SELECT p.position + 1 INTO base FROM stream_positions p
  WHERE p.brand_id = list_brand AND p.mode = list_mode AND (p.created_at, p.stream_id) < (from_created, from_id)
  ORDER BY p.position DESC LIMIT 1;
  base := coalesce(base, 0);
  DELETE FROM stream_positions WHERE brand_id = list_brand AND mode = list_mode AND position >= base;
  INSERT INTO stream_positions (stream_id, brand_id, mode, created_at, position)
  SELECT s.id, list_brand, list_mode, s.created_at, base + row_number() OVER (ORDER BY s.created_at, s.id) - 1
  FROM streams s
  WHERE s.brand_id = list_brand AND s.mode = list_mode AND s.created_at >= from_created AND (s.created_at, s.id) >= (from_created, from_id);
END;
$$;

-- The three triggers below work per statement on its transition tables (`gone`: the rows
-- before, `added`: after), so a bulk insert or delete renumbers each list once. Each locks the
-- brands it touches, adjusts the counts, then renumbers each list from its oldest changed key.

CREATE FUNCTION streams_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  list record;
BEGIN
  PERFORM 1 FROM brands WHERE id IN (SELECT brand_id FROM added) ORDER BY id FOR NO KEY UPDATE;
  INSERT INTO stream_counts AS c (brand_id, mode, preparing, live, ended, error)
  SELECT brand_id, mode, count(*) FILTER (WHERE status = 'preparing'), count(*) FILTER (WHERE status = 'live'),
         count(*) FILTER (WHERE status = 'ended'), count(*) FILTER (WHERE status = 'error')
  FROM added GROUP BY brand_id, mode
  ON CONFLICT (brand_id, mode) DO UPDATE SET
    preparing = c.preparing + excluded.preparing, live = c.live + excluded.live,
    ended = c.ended + excluded.ended, error = c.error + excluded.error;
  FOR list IN SELECT DISTINCT ON (brand_id, mode) brand_id, mode, created_at, id FROM added ORDER BY brand_id, mode, created_at, id LOOP
    PERFORM stream_positions_from(list.brand_id, list.mode, list.created_at, list.id);
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE FUNCTION streams_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  list record;
BEGIN
  PERFORM 1 FROM brands WHERE id IN (SELECT brand_id FROM gone) ORDER BY id FOR NO KEY UPDATE;
  UPDATE stream_counts c SET
    preparing = c.preparing - g.preparing, live = c.live - g.live, ended = c.ended - g.ended, error = c.error - g.error
  FROM (
    SELECT brand_id, mode, count(*) FILTER (WHERE status = 'preparing') AS preparing, count(*) FILTER (WHERE status = 'live') AS live,
           count(*) FILTER (WHERE status = 'ended') AS ended, count(*) FILTER (WHERE status = 'error') AS error
    FROM gone GROUP BY brand_id, mode
  ) g
  WHERE c.brand_id = g.brand_id AND c.mode = g.mode;
  DELETE FROM stream_positions WHERE stream_id IN (SELECT id FROM gone);
  FOR list IN SELECT DISTINCT ON (brand_id, mode) brand_id, mode, created_at, id FROM gone ORDER BY brand_id, mode, created_at, id LOOP
    PERFORM stream_positions_from(list.brand_id, list.mode, list.created_at, list.id);
  END LOOP;
  RETURN NULL;
END;
$$;

-- Most updates change neither status nor list key (viewer counts, billing, schedules, or the
-- same status written again): they end at the first look.
CREATE FUNCTION streams_updated() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  list record;
  before_ids uuid[];
  after_ids uuid[];
  moved_ids uuid[];
BEGIN
  SELECT array_agg(g.id) INTO before_ids FROM gone g WHERE NOT EXISTS (
    SELECT 1 FROM added a WHERE a.id = g.id AND a.brand_id = g.brand_id AND a.mode = g.mode AND a.created_at = g.created_at AND a.status = g.status);
  IF before_ids IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(a.id) INTO after_ids FROM added a WHERE NOT EXISTS (
    SELECT 1 FROM gone g WHERE a.id = g.id AND a.brand_id = g.brand_id AND a.mode = g.mode AND a.created_at = g.created_at AND a.status = g.status);
  PERFORM 1 FROM brands WHERE id IN (
    SELECT brand_id FROM gone WHERE id = ANY (before_ids) UNION SELECT brand_id FROM added WHERE id = ANY (after_ids)
  ) ORDER BY id FOR NO KEY UPDATE;
  INSERT INTO stream_counts AS c (brand_id, mode, preparing, live, ended, error)
  SELECT brand_id, mode, coalesce(sum(sign) FILTER (WHERE status = 'preparing'), 0), coalesce(sum(sign) FILTER (WHERE status = 'live'), 0),
         coalesce(sum(sign) FILTER (WHERE status = 'ended'), 0), coalesce(sum(sign) FILTER (WHERE status = 'error'), 0)
  FROM (
    SELECT brand_id, mode, status, -1 AS sign FROM gone WHERE id = ANY (before_ids)
    UNION ALL SELECT brand_id, mode, status, 1 FROM added WHERE id = ANY (after_ids)
  ) changed GROUP BY brand_id, mode
  ON CONFLICT (brand_id, mode) DO UPDATE SET
    preparing = c.preparing + excluded.preparing, live = c.live + excluded.live,
    ended = c.ended + excluded.ended, error = c.error + excluded.error;
  -- Rows whose list key changed (not only their status) leave their old place and take a new one.
  SELECT array_agg(g.id) INTO moved_ids FROM gone g WHERE g.id = ANY (before_ids) AND NOT EXISTS (
    SELECT 1 FROM added a WHERE a.id = g.id AND a.brand_id = g.brand_id AND a.mode = g.mode AND a.created_at = g.created_at);
  IF moved_ids IS NULL AND cardinality(before_ids) = cardinality(coalesce(after_ids, '{}')) THEN
    RETURN NULL;
  END IF;
  DELETE FROM stream_positions WHERE stream_id IN (SELECT id FROM gone WHERE id = ANY (before_ids));
  FOR list IN
    SELECT DISTINCT ON (brand_id, mode) brand_id, mode, created_at, id FROM (
      SELECT brand_id, mode, created_at, id FROM gone WHERE id = ANY (before_ids)
      UNION ALL SELECT brand_id, mode, created_at, id FROM added WHERE id = ANY (after_ids)
    ) keys ORDER BY brand_id, mode, created_at, id
  LOOP
    PERFORM stream_positions_from(list.brand_id, list.mode, list.created_at, list.id);
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE TRIGGER streams_inserted AFTER INSERT ON streams REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION streams_inserted();
CREATE TRIGGER streams_deleted AFTER DELETE ON streams REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION streams_deleted();
CREATE TRIGGER streams_updated AFTER UPDATE ON streams REFERENCING OLD TABLE AS gone NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION streams_updated();
