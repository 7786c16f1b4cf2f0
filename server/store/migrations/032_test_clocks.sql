-- The test clock of a brand's test mode (POST /test-clock/advance): how far its test mode's time
-- runs ahead of the real clock. No row is an offset of 0. Every process reads it here, so a clock
-- advanced through one process holds for all of them. Test-mode times (streams' schedules and
-- stamps, events, deliveries' due times and attempts) are written on this clock; the sweeper and
-- the delivery worker compare them with the real time plus this offset (store/streams.ts,
-- store/delivery-queue.ts). Only brands that advanced their clock have a row, so the look for
-- what an advance made due walks this table and, per brand, its (brand, mode, next_due_at) index.
CREATE TABLE test_clocks (
  brand_id       uuid PRIMARY KEY REFERENCES brands (id),
  offset_seconds bigint NOT NULL CHECK (offset_seconds >= 0),
  -- The real time of the last advance.
  advanced_at    timestamptz NOT NULL
);
