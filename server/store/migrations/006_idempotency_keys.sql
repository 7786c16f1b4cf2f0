-- Idempotency-Key records of POST /streams and POST /webhooks (README: Idempotency). One row per
-- (API key, Idempotency-Key): keys are scoped to the API key that sent them. A row is claimed
-- before the operation acts (lock_token, locked_until: a lock with an expiry, so a crashed
-- process leaves the key in use for at most the lock's lifetime, not for 24 hours); the id of
-- what the operation creates is written in the same transaction that creates it (resource_id),
-- so an attempt that takes over a lapsed lock answers from that resource instead of creating it
-- again; the answer (status and JSON text) is stored once known. Rows live 24 hours from the
-- first request (expires_at) and are deleted by the lifecycle sweeper.
-- No foreign key to api_keys: its check would lock the key row on every POST.
CREATE TABLE idempotency_keys (
  api_key_id      uuid NOT NULL,
  idempotency_key text NOT NULL,
  operation       text NOT NULL,
  -- SHA-256 (hex) of the operation and the canonical JSON of the parsed request body.
  fingerprint     text NOT NULL,
  lock_token      uuid NOT NULL,
  -- While the first attempt runs; null once its answer is stored.
  locked_until    timestamptz,
  resource_id     uuid,
  response_status smallint,
  response_body   text,
  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (api_key_id, idempotency_key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
