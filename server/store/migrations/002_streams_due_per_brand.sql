-- Reads check whether any of the brand's streams has a transition due (min(next_due_at) per brand
-- and mode), and the catch-up locks the due ones in next_due_at order: both walk this index
-- instead of every due stream of every brand.
CREATE INDEX streams_brand_mode_due ON streams (brand_id, mode, next_due_at) WHERE next_due_at IS NOT NULL;
