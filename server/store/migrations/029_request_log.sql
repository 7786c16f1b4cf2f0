-- The request log (GET /requests, docs/operators.md "Request log"): one row per request made with
-- one of a brand's keys, written in batches off the request path. `id` is a UUIDv7 (its first 48
-- bits the arrival time in milliseconds), so the one index orders a brand's entries newest first,
-- pages them (`starting_after`) and bounds `since` without a second index on time. No foreign key:
-- a batch never waits on a brand's row (brands are never deleted).
CREATE TABLE request_log (
  brand_id                uuid NOT NULL,
  mode                    text NOT NULL,
  id                      uuid NOT NULL,
  request_id              text NOT NULL,
  created_at              timestamptz NOT NULL,
  key_id                  uuid NOT NULL,
  key_name                text NOT NULL,
  key_last_four           text,
  method                  text NOT NULL,
  path                    text NOT NULL,
  query                   text,
  status                  smallint NOT NULL,
  error_code              text,
  duration_ms             real NOT NULL,
  client_address          text NOT NULL,
  idempotency_key         text,
  replayed                boolean NOT NULL,
  -- The redacted text, cut to 10,240 bytes of UTF-8, stored as a byte saying how, then the bytes:
  -- 0, the UTF-8 as it is; 1, the UTF-8 compressed with raw deflate (store/request-log.ts). The
  -- embedded database's long bodies are deflated by the writer (its TOAST compression, in
  -- WebAssembly, cost three times the CPU); PostgreSQL's are compressed by TOAST.
  request_body            bytea,
  request_body_truncated  boolean NOT NULL,
  response_body           bytea,
  response_body_truncated boolean NOT NULL
);
CREATE INDEX request_log_newest ON request_log (brand_id, mode, id);
-- GET /requests/{request_id}: a hash index, as request ids are random text. A B-tree of them
-- (compared by collation, each insert at a random place) cost the embedded database a third of
-- an entry's insert; the brand and mode are checked on the few rows it finds.
CREATE INDEX request_log_request_id ON request_log USING hash (request_id);

-- How many rows each brand and mode has in request_log, kept by the same statements that insert
-- and delete them: the sweeper finds a brand over its ceiling (REQUEST_LOG_MAX_ROWS) here, and
-- every brand with rows to age out, without counting the log.
CREATE TABLE request_log_counts (
  brand_id  uuid NOT NULL,
  mode      text NOT NULL,
  stored    bigint NOT NULL,
  PRIMARY KEY (brand_id, mode)
);
