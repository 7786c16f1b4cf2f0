-- A stream's timeline in the dashboard reads its events, and their deliveries through them, by
-- stream: one range of this index rather than a scan of the brand's events.
CREATE INDEX webhook_events_stream ON webhook_events (stream_id, created_at, id);
