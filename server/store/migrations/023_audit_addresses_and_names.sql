-- The audit log names what changed and where the request came from.
--
-- `address`: the client address of the request that made the change (server/http/client-address.ts),
-- for every entry from now on. Entries written before this have none (null); sign-in entries also
-- name it in their detail, as before.
-- `target_name`: what `target_id` names, as it was called then: a key's name, a member's or an
-- invitation's email, a stream's product, a webhook's URL, a session's device.
ALTER TABLE audit_log
  ADD COLUMN address text,
  ADD COLUMN target_name text;

-- Entries written before this get their target's name where it can still be found: names and
-- emails never change once made.
UPDATE audit_log a SET target_name = k.name
FROM api_keys k
WHERE a.action LIKE 'key.%' AND a.target_id = k.id::text;

UPDATE audit_log a SET target_name = m.email
FROM members m
WHERE (a.action LIKE 'member.%' OR a.action LIKE 'session.%') AND a.target_id = m.id::text;

UPDATE audit_log a SET target_name = i.email
FROM invitations i
WHERE a.action LIKE 'invitation.%' AND a.target_id = i.id::text;

UPDATE audit_log a SET target_name = s.product_name
FROM streams s
WHERE a.action LIKE 'stream.%' AND a.target_id = s.id::text;

UPDATE audit_log a SET target_name = w.url
FROM webhooks w
WHERE a.action LIKE 'webhook.%' AND a.target_id = w.id::text;

-- The owners' filters: one action, or what one member did, newest first.
CREATE INDEX audit_log_brand_action ON audit_log (brand_id, action, at DESC, id DESC);
CREATE INDEX audit_log_brand_member ON audit_log (brand_id, member_id, at DESC, id DESC) WHERE member_id IS NOT NULL;
