-- `GET /webhooks/listen` reads a brand's events of one mode in time order, from a point in time,
-- every half second per open stream: one range of this index, not a scan of every brand's events.
CREATE INDEX webhook_events_by_brand ON webhook_events (brand_id, mode, created_at, id);
