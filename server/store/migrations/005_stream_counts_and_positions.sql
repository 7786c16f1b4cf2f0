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

-- Adds `delta` to the count of `status` in one brand and mode's row, having locked the brand.
CREATE FUNCTION stream_counts_add(list_brand uuid, list_mode text, status text, delta integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  WITH locked AS (SELECT id FROM brands WHERE id = list_brand FOR NO KEY UPDATE)
  INSERT INTO stream_counts AS c (brand_id, mode, preparing, live, ended, error)
  SELECT list_brand, list_mode, (status = 'preparing')::int * delta, (status = 'live')::int * delta,
         (status = 'ended')::int * delta, (status = 'error')::int * delta
  FROM locked
  ON CONFLICT (brand_id, mode) DO UPDATE SET
    preparing = c.preparing + excluded.preparing, live = c.live + excluded.live,
    ended = c.ended + excluded.ended, error = c.error + excluded.error;
END;
$$;

-- A new stream is counted and placed. The newest of its list (almost always) takes the next
-- position; any other renumbers the list from its key on.
CREATE FUNCTION stream_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  placed bigint;
BEGIN
  WITH locked AS (SELECT id FROM brands WHERE id = NEW.brand_id FOR NO KEY UPDATE)
  INSERT INTO stream_counts AS c (brand_id, mode, preparing, live, ended, error)
  SELECT NEW.brand_id, NEW.mode, (NEW.status = 'preparing')::int, (NEW.status = 'live')::int, (NEW.status = 'ended')::int, (NEW.status = 'error')::int
  FROM locked
  ON CONFLICT (brand_id, mode) DO UPDATE SET
    preparing = c.preparing + excluded.preparing, live = c.live + excluded.live,
    ended = c.ended + excluded.ended, error = c.error + excluded.error;
  INSERT INTO stream_positions (stream_id, brand_id, mode, created_at, position)
  SELECT NEW.id, NEW.brand_id, NEW.mode, NEW.created_at, coalesce(last.position + 1, 0)
  FROM (SELECT 1) one LEFT JOIN LATERAL (
    SELECT p.position, p.created_at, p.stream_id FROM stream_positions p
    WHERE p.brand_id = NEW.brand_id AND p.mode = NEW.mode ORDER BY p.position DESC LIMIT 1
  ) last ON true
  WHERE last.position IS NULL OR (last.created_at, last.stream_id) < (NEW.created_at, NEW.id);
  GET DIAGNOSTICS placed = ROW_COUNT;
  IF placed = 0 THEN
    PERFORM stream_positions_from(NEW.brand_id, NEW.mode, NEW.created_at, NEW.id);
  END IF;
  RETURN NULL;
END;
$$;

-- Fires only when the status or the list key changed (see the trigger's WHEN): a transition
-- moves one count; a new brand, mode or time also moves the stream in the lists.
CREATE FUNCTION stream_updated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF (OLD.brand_id, OLD.mode) = (NEW.brand_id, NEW.mode) THEN
    WITH locked AS (SELECT id FROM brands WHERE id = NEW.brand_id FOR NO KEY UPDATE)
    UPDATE stream_counts SET
      preparing = preparing + (NEW.status = 'preparing')::int - (OLD.status = 'preparing')::int,
      live = live + (NEW.status = 'live')::int - (OLD.status = 'live')::int,
      ended = ended + (NEW.status = 'ended')::int - (OLD.status = 'ended')::int,
      error = error + (NEW.status = 'error')::int - (OLD.status = 'error')::int
    WHERE brand_id = NEW.brand_id AND mode = NEW.mode AND EXISTS (SELECT 1 FROM locked);
  ELSE
    PERFORM 1 FROM brands WHERE id IN (OLD.brand_id, NEW.brand_id) ORDER BY id FOR NO KEY UPDATE;
    PERFORM stream_counts_add(OLD.brand_id, OLD.mode, OLD.status, -1);
    PERFORM stream_counts_add(NEW.brand_id, NEW.mode, NEW.status, 1);
  END IF;
  IF (OLD.id, OLD.brand_id, OLD.mode, OLD.created_at) IS DISTINCT FROM (NEW.id, NEW.brand_id, NEW.mode, NEW.created_at) THEN
    DELETE FROM stream_positions WHERE stream_id = OLD.id;
    PERFORM stream_positions_from(OLD.brand_id, OLD.mode, OLD.created_at, OLD.id);
    PERFORM stream_positions_from(NEW.brand_id, NEW.mode, NEW.created_at, NEW.id);
  END IF;
  RETURN NULL;
END;
$$;

-- Deletes work per statement on their transition table (`gone`), so removing a brand's
-- thousands of streams renumbers its list once rather than once per stream.
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

-- Inserts and updates per row: one stream per statement is what every writer does, and the
-- update trigger's condition is checked without entering the function, so the updates that
-- change neither status nor list key (viewer counts, billing, schedules, the same status
-- written again) cost nothing here. Each counted stream rewrites its brand's count row, so one
-- transaction writing many thousands of a brand's streams slows as it goes (each rewrite walks
-- the row's earlier versions): bulk writes go in statements of a thousand streams or so.
CREATE TRIGGER stream_inserted AFTER INSERT ON streams FOR EACH ROW EXECUTE FUNCTION stream_inserted();
CREATE TRIGGER stream_updated AFTER UPDATE OF id, brand_id, mode, created_at, status ON streams FOR EACH ROW
  WHEN ((OLD.status, OLD.id, OLD.brand_id, OLD.mode, OLD.created_at) IS DISTINCT FROM (NEW.status, NEW.id, NEW.brand_id, NEW.mode, NEW.created_at))
  EXECUTE FUNCTION stream_updated();
CREATE TRIGGER streams_deleted AFTER DELETE ON streams REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION streams_deleted();
