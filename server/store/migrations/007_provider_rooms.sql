-- Rooms a real agent provider (LiveKit) holds for live-key streams: what its webhooks and the
-- sweeper's checks of the room service need beyond the stream itself. A row is written before
-- the room is created, so a webhook that arrives while the launch is still answering finds it.
CREATE TABLE provider_rooms (
  stream_id       uuid PRIMARY KEY REFERENCES streams (id),
  brand_id        uuid NOT NULL,
  room_name       text NOT NULL UNIQUE,
  -- The agent participant last seen joining, and when; cleared of a departure when it comes back.
  agent_identity  text,
  agent_joined_at timestamptz,
  -- When the agent was seen leaving (or found missing): the stream ends at that moment unless the
  -- agent is back by the next check of the room service.
  agent_left_at   timestamptz,
  -- When the sweeper next asks the room service about this room (or retries deleting it).
  check_at        timestamptz NOT NULL,
  close_tried_at  timestamptz,
  closed_at       timestamptz
);
-- The sweeper walks the rooms still open, in check order.
CREATE INDEX provider_rooms_open ON provider_rooms (check_at) WHERE closed_at IS NULL;
-- Provider webhook event ids already applied: a duplicate or replayed event changes nothing.
-- Kept a day, well beyond the validity of the signature a replay would need.
CREATE TABLE provider_webhook_events (
  id          text PRIMARY KEY,
  received_at timestamptz NOT NULL
);
CREATE INDEX provider_webhook_events_received ON provider_webhook_events (received_at);
