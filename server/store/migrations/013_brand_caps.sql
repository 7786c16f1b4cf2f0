-- The per-brand caps count a brand's usable keys, open invitations and members at every creation,
-- and the bounded lists read a brand's keys: indexes so that both stay cheap as the tables grow.
CREATE INDEX api_keys_brand ON api_keys (brand_id, created_at);
CREATE INDEX invitations_brand_open ON invitations (brand_id) WHERE used_at IS NULL AND revoked_at IS NULL;
