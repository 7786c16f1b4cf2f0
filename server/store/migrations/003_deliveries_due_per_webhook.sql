-- The delivery worker claims at most a few due deliveries per webhook, oldest first: one short
-- range of this index per webhook, however large another webhook's backlog is.
CREATE INDEX webhook_deliveries_due_per_webhook ON webhook_deliveries (webhook_id, next_attempt_at, id) WHERE status = 'pending';
