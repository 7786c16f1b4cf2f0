-- The browsers a member has signed in from (the device cookie, docs/dashboard.md "Sign-in
-- throttling"): a sign-in from one of them is throttled only on its own, never refused by the
-- account's ceiling, so guessing from other browsers cannot lock the member out. A row per member
-- and browser; at most 20 per member (the least recently used dropped), forgotten a year unused.
CREATE TABLE member_devices (
  member_id     uuid NOT NULL REFERENCES members (id) ON DELETE CASCADE,
  -- SHA-256 of the cookie's value, hex: a copy of the table vouches for no browser.
  token_hash    text NOT NULL,
  created_at    timestamptz NOT NULL,
  last_used_at  timestamptz NOT NULL,
  PRIMARY KEY (member_id, token_hash)
);

-- The lifecycle sweeper forgets devices unused for a year, found by their last use.
CREATE INDEX member_devices_last_used ON member_devices (last_used_at);
