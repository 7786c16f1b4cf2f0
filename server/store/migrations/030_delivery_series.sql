-- A delivery sent again on request (the partner's retry or recover, the operator's retry) starts a
-- new series of attempts: `series` counts them (0: the first, from the event), `attempt` counts
-- the attempts of the current series (at most six, the retry schedule's), and each attempt row
-- names its series. The first attempt of a requested series records what asked for it.
ALTER TABLE webhook_deliveries ADD COLUMN series integer NOT NULL DEFAULT 0;
-- 'retry', 'recover' or 'operator'; null for series 0.
ALTER TABLE webhook_deliveries ADD COLUMN series_trigger text;
-- Who asked: the API key as listed (`svc_test_…abcd`), or 'operator'.
ALTER TABLE webhook_deliveries ADD COLUMN series_requested_by text;
-- The recover call (or retry) that started the series, so an Idempotency-Key replay can count it.
ALTER TABLE webhook_deliveries ADD COLUMN series_request uuid;

ALTER TABLE webhook_attempts ADD COLUMN series integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_attempts ADD COLUMN trigger text;
ALTER TABLE webhook_attempts ADD COLUMN requested_by text;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey;
ALTER TABLE webhook_attempts ADD PRIMARY KEY (delivery_id, series, attempt);

-- Recover finds a webhook's failed deliveries since a time without reading the others.
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (webhook_id, created_at) WHERE status = 'failed';
CREATE INDEX webhook_deliveries_series_request ON webhook_deliveries (series_request) WHERE series_request IS NOT NULL;
