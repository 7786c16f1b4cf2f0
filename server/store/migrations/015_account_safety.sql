-- contract: drops sign_in_failures, which 1.4.0 reads and writes on every dashboard sign-in.
-- Sign-in throttling that reserves each attempt before the password is checked, single-use TOTP
-- codes, and password-reset links.

-- One row per throttled subject: `pair:<email> <address>` (one client against one account) and
-- `account:<email>` (the account's ceiling). An attempt is reserved by one statement on the row
-- (services/sign-in-throttle.ts), so concurrent attempts, from any process, are all counted.
CREATE TABLE sign_in_throttle (
  subject          text PRIMARY KEY,
  -- Attempts since the last success (or since the row went stale), each counted when reserved.
  failures         integer NOT NULL,
  -- Attempts refused since the last reserved one (the first refusal is audited).
  refused          integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  last_attempt_at  timestamptz NOT NULL
);

DROP TABLE sign_in_failures;

-- The TOTP time step last accepted: a code is accepted once, and none older than it.
ALTER TABLE members ADD COLUMN totp_last_step bigint;

CREATE TABLE password_resets (
  id          uuid PRIMARY KEY,
  member_id   uuid NOT NULL REFERENCES members (id),
  -- SHA-256 of the link's token, hex; the token itself is never stored.
  token_hash  text NOT NULL UNIQUE,
  -- A member's email, or 'operator'.
  issued_by   text NOT NULL,
  -- The reset also turns two-factor off: for a member who lost the second factor as well.
  turn_off_two_factor boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);

CREATE INDEX password_resets_member ON password_resets (member_id) WHERE used_at IS NULL;
