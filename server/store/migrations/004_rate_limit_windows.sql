-- Requests per brand per one-minute window, counted here on PostgreSQL so that every server
-- process of a deployment shares the brand's limit (the embedded database counts in memory).
-- UNLOGGED: no WAL is written for these counts and PostgreSQL empties the table after a crash,
-- as the spec allows ("counters reset when the service is redeployed"). No foreign key to
-- brands: its check would lock the brand row on every request. A brand's past windows are
-- deleted by its first request of a new window (store/keys.ts), so the table holds a row or two
-- per active brand.
CREATE UNLOGGED TABLE rate_limit_windows (
  brand_id     uuid NOT NULL,
  window_start timestamptz NOT NULL,
  count        integer NOT NULL,
  PRIMARY KEY (brand_id, window_start)
);
