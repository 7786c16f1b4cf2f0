-- The lifecycle sweeper deletes sessions, invitations and password-reset links a day after they
-- ended (services/members/retention.ts): found by when they ended, so no pass scans a table whole.
-- LEAST skips NULLs: a row ends at the first of its expiry and its revocation or use.
CREATE INDEX dashboard_sessions_ended ON dashboard_sessions (LEAST(expires_at, revoked_at));
CREATE INDEX invitations_ended ON invitations (LEAST(expires_at, used_at, revoked_at));
CREATE INDEX password_resets_ended ON password_resets (LEAST(expires_at, used_at));
