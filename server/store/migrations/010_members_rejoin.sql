-- A member removed by mistake can be invited again with the same email. Emails stay unique among
-- members not removed (sign-in finds one member by email); a removed member's row stays as it
-- was, so the audit log's entries about it still name that membership.

ALTER TABLE members DROP CONSTRAINT members_email_key;

CREATE UNIQUE INDEX members_email_current ON members (email) WHERE removed_at IS NULL;
