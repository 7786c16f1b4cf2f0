-- The lifecycle sweeper forgets throttle subjects untouched for a day (services/sign-in-throttle.ts):
-- found by their last attempt, so a table of many made-up emails is not scanned whole each pass.
CREATE INDEX sign_in_throttle_last_attempt ON sign_in_throttle (last_attempt_at);
