-- A member's sessions as the Security page lists them, each revocable on its own.
--
-- `public_id`: the session's name in the API, so one can be revoked without its cookie or the
-- cookie's hash ever leaving the server. `user_agent`: the browser's User-Agent at sign-in, which
-- the page names a device by. `address`: the client address it was last seen from, written with
-- `last_seen_at` (at most once a minute). Sessions begun before this have neither (null).
ALTER TABLE dashboard_sessions
  ADD COLUMN public_id uuid NOT NULL DEFAULT gen_random_uuid(),
  ADD COLUMN user_agent text,
  ADD COLUMN address text;

CREATE UNIQUE INDEX dashboard_sessions_public_id ON dashboard_sessions (public_id);
