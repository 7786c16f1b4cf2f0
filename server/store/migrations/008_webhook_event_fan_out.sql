-- The request that changes a stream records only its event, with the webhooks subscribed to it at
-- that moment; the delivery worker expands events into one delivery per webhook later, in
-- batches. NULL: nothing left to expand (events recorded before this migration had their
-- deliveries written with them).
ALTER TABLE webhook_events ADD COLUMN pending_webhook_ids uuid[];

-- Events still to expand, oldest first; empty when the worker keeps up, so cheap to look at.
CREATE INDEX webhook_events_to_fan_out ON webhook_events (created_at, id) WHERE pending_webhook_ids IS NOT NULL;

-- A delivery's id follows from its event and webhook, so the operator's list can show a delivery
-- before the worker has written it, under the id it will have (an RFC 9562 version 8 UUID over
-- the MD5 of both ids).
CREATE FUNCTION webhook_delivery_id(event_id text, webhook_id uuid) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT (substr(h, 1, 12) || '8' || substr(h, 14, 3) || substr('89ab', (get_byte(decode(substr(h, 17, 2), 'hex'), 0) & 3) + 1, 1) || substr(h, 18))::uuid
  FROM (SELECT md5(event_id || '/' || webhook_id::text) AS h) AS digest
$$;
