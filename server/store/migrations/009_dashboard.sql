-- The dashboard: members of a brand, their invitations and sessions, two-factor, sign-in
-- attempts, the audit log; and what the delivery log shows of each attempt and key.

CREATE TABLE members (
  id               uuid PRIMARY KEY,
  brand_id         uuid NOT NULL REFERENCES brands (id),
  -- Lower case; one member per email across brands, so sign-in needs no brand.
  email            text NOT NULL UNIQUE,
  role             text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
  -- argon2id, in the PHC string format (parameters and salt included).
  password_hash    text NOT NULL,
  totp_secret      text,
  totp_pending     text,
  created_at       timestamptz NOT NULL,
  last_sign_in_at  timestamptz,
  removed_at       timestamptz
);

CREATE INDEX members_brand ON members (brand_id, created_at) WHERE removed_at IS NULL;

CREATE TABLE member_recovery_codes (
  member_id  uuid NOT NULL REFERENCES members (id),
  -- SHA-256 of the code, hex: codes are random, so a fast hash is enough.
  code_hash  text NOT NULL,
  used_at    timestamptz,
  PRIMARY KEY (member_id, code_hash)
);

CREATE TABLE invitations (
  id          uuid PRIMARY KEY,
  brand_id    uuid NOT NULL REFERENCES brands (id),
  email       text NOT NULL,
  role        text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
  -- SHA-256 of the link's token, hex; the token itself is never stored.
  token_hash  text NOT NULL UNIQUE,
  invited_by  uuid REFERENCES members (id),
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  revoked_at  timestamptz
);

CREATE INDEX invitations_brand ON invitations (brand_id, created_at);

CREATE TABLE dashboard_sessions (
  -- SHA-256 of the cookie's value, hex: a copy of the table signs nobody in.
  id_hash       text PRIMARY KEY,
  member_id     uuid NOT NULL REFERENCES members (id),
  csrf_token    text NOT NULL,
  created_at    timestamptz NOT NULL,
  last_seen_at  timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  revoked_at    timestamptz
);

CREATE INDEX dashboard_sessions_member ON dashboard_sessions (member_id) WHERE revoked_at IS NULL;

-- Failed sign-ins, per account (email) and per client address, for the sign-in limit.
CREATE TABLE sign_in_failures (
  subject  text NOT NULL,
  at       timestamptz NOT NULL
);

CREATE INDEX sign_in_failures_subject ON sign_in_failures (subject, at);

CREATE TABLE audit_log (
  id         uuid PRIMARY KEY,
  brand_id   uuid NOT NULL REFERENCES brands (id),
  at         timestamptz NOT NULL,
  -- A member's email, or 'operator'.
  actor      text NOT NULL,
  member_id  uuid,
  action     text NOT NULL,
  mode       text CHECK (mode IN ('live', 'test')),
  target_id  text,
  detail     text NOT NULL
);

CREATE INDEX audit_log_brand ON audit_log (brand_id, at DESC, id DESC);

ALTER TABLE webhook_attempts ADD COLUMN duration_ms integer;
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
