-- Each dashboard session's requests in its current one-minute window, counted here on PostgreSQL
-- so that every server process of a deployment shares the session's limit (the embedded database
-- counts in memory). On the session's own row rather than a table of windows: nothing to clean
-- up, and the count ends with its session.
ALTER TABLE dashboard_sessions
  ADD COLUMN window_start timestamptz,
  ADD COLUMN window_count integer NOT NULL DEFAULT 0;
