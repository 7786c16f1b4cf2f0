-- The key cap counts a brand's unrevoked keys, and the key list reads them first, both while the
-- brand's lock is held: revoked keys grow without bound, so neither may have to step over them.
CREATE INDEX api_keys_brand_unrevoked ON api_keys (brand_id) WHERE revoked_at IS NULL;
