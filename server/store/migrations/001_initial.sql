-- Brands, keys, creators, streams, webhooks and the webhook outbox.
-- Money is integer cents; every timestamp is timestamptz written with millisecond precision.

CREATE TABLE brands (
  id                    uuid PRIMARY KEY,
  name                  text NOT NULL,
  vertical              text NOT NULL CHECK (vertical IN ('live-commerce', 'igaming')),
  plan                  text NOT NULL CHECK (plan IN ('free', 'starter', 'growth', 'enterprise')),
  credits_cents         bigint NOT NULL DEFAULT 0 CHECK (credits_cents >= 0),
  credits_held_cents    bigint NOT NULL DEFAULT 0 CHECK (credits_held_cents >= 0),
  plan_minutes          integer NOT NULL CHECK (plan_minutes >= 0),
  minutes_used          integer NOT NULL DEFAULT 0 CHECK (minutes_used >= 0),
  rate_limit_per_minute integer NOT NULL DEFAULT 100 CHECK (rate_limit_per_minute >= 1),
  max_active_streams    integer NOT NULL DEFAULT 3 CHECK (max_active_streams >= 0),
  created_at            timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id          uuid PRIMARY KEY,
  brand_id    uuid NOT NULL REFERENCES brands (id),
  name        text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('live', 'test')),
  scopes      text[] NOT NULL,
  -- SHA-256 of the full key, hex; the key itself is never stored.
  key_hash    text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz,
  revoked_at  timestamptz
);

CREATE TABLE creators (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  status      text,
  languages   text[] NOT NULL,
  style       text,
  personality text,
  vibe        text,
  consent     boolean,
  photo       text
);

CREATE TABLE streams (
  id               uuid PRIMARY KEY,
  brand_id         uuid NOT NULL REFERENCES brands (id),
  mode             text NOT NULL CHECK (mode IN ('live', 'test')),
  status           text NOT NULL CHECK (status IN ('preparing', 'live', 'ended', 'error')),
  creator_id       text NOT NULL,
  product_name     text NOT NULL,
  platform         text NOT NULL,
  vertical         text NOT NULL,
  source           text NOT NULL DEFAULT 'api',
  duration_minutes integer,
  script           text,
  room_name        text NOT NULL,
  ws_url           text,
  viewer_token     text,
  agent_dispatched boolean,
  dispatch_method  text,
  viewer_count     integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL,
  started_at       timestamptz,
  ended_at         timestamptz,
  -- Scheduled transitions (the agent joining, a simulated failure, the preparing time-out) and
  -- the earliest of them, so the sweeper finds due streams through one index after any restart.
  join_at          timestamptz,
  fail_at          timestamptz,
  timeout_at       timestamptz,
  next_due_at      timestamptz,
  sim_trigger      text,
  -- Billing (live mode only): the hold taken at start and the settlement when it leaves live.
  price_per_minute_cents integer NOT NULL DEFAULT 0,
  hold_cents       bigint NOT NULL DEFAULT 0,
  billed_minutes   integer,
  charged_cents    bigint,
  settled_at       timestamptz
);

CREATE INDEX streams_brand_mode_created ON streams (brand_id, mode, created_at DESC, id DESC);
CREATE INDEX streams_active ON streams (brand_id, mode) WHERE status IN ('preparing', 'live');
CREATE INDEX streams_due ON streams (next_due_at) WHERE next_due_at IS NOT NULL;

CREATE TABLE webhooks (
  id         uuid PRIMARY KEY,
  brand_id   uuid NOT NULL REFERENCES brands (id),
  mode       text NOT NULL CHECK (mode IN ('live', 'test')),
  url        text NOT NULL,
  events     text[] NOT NULL,
  secret     text NOT NULL,
  created_at timestamptz NOT NULL,
  deleted_at timestamptz
);

CREATE INDEX webhooks_brand_mode ON webhooks (brand_id, mode, created_at) WHERE deleted_at IS NULL;

-- Transactional outbox: events are written in the same transaction as the state change.
CREATE TABLE webhook_events (
  id         text PRIMARY KEY,
  brand_id   uuid NOT NULL REFERENCES brands (id),
  mode       text NOT NULL,
  type       text NOT NULL,
  stream_id  uuid NOT NULL,
  payload    text NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE webhook_deliveries (
  id              uuid PRIMARY KEY,
  event_id        text NOT NULL REFERENCES webhook_events (id),
  webhook_id      uuid NOT NULL REFERENCES webhooks (id),
  brand_id        uuid NOT NULL REFERENCES brands (id),
  status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt         integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  response_status integer,
  error           text,
  created_at      timestamptz NOT NULL,
  UNIQUE (event_id, webhook_id)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_brand ON webhook_deliveries (brand_id, created_at DESC);

CREATE TABLE webhook_attempts (
  delivery_id     uuid NOT NULL REFERENCES webhook_deliveries (id),
  attempt         integer NOT NULL,
  attempted_at    timestamptz NOT NULL,
  signature_t     bigint NOT NULL,
  response_status integer,
  error           text,
  PRIMARY KEY (delivery_id, attempt)
);
