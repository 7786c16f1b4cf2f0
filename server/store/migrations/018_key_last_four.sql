-- Keys a member can tell apart. The key's last four characters, kept when it is made, so lists
-- show `svc_test_…abcd` (the key itself stays hashed; four of its 32 random characters leave 28,
-- far beyond guessing). Keys made before this have none (null).
ALTER TABLE api_keys ADD COLUMN last_four text CHECK (last_four ~ '^[0-9A-Za-z]{4}$');

-- A name names one key of a brand and mode among the keys not revoked. Active duplicates made
-- before this get the start of their id appended (the oldest keeps its name), so the index holds.
UPDATE api_keys k
SET name = left(k.name, 89) || ' (' || left(k.id::text, 8) || ')'
WHERE k.revoked_at IS NULL
  AND EXISTS (
    SELECT 1 FROM api_keys o
    WHERE o.brand_id = k.brand_id AND o.environment = k.environment AND o.name = k.name
      AND o.revoked_at IS NULL AND (o.created_at, o.id) < (k.created_at, k.id)
  );

CREATE UNIQUE INDEX api_keys_active_name ON api_keys (brand_id, environment, name) WHERE revoked_at IS NULL;
