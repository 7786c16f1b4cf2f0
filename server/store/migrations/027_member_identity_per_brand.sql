-- contract: replaces the unique index members_email_current, which 1.4.0's ON CONFLICT (email) needs.
-- 1.4.0 accepts invitations with INSERT … ON CONFLICT (email) WHERE removed_at IS NULL. That index
-- cannot stay beside the new one on (brand_id, email): it would still forbid one email in two brands.
-- A member is an email within one brand: the same email may belong to members of several brands,
-- so accepting an invitation never depends on (nor reveals) another brand's members, and an
-- address invited elsewhere cannot keep its owner out of their own brand. Sign-in looks the email
-- up in every brand and lets the password (and, if needed, the brand) pick the member.
DROP INDEX members_email_current;
CREATE UNIQUE INDEX members_brand_email_current ON members (brand_id, email) WHERE removed_at IS NULL;
CREATE INDEX members_email_current ON members (email) WHERE removed_at IS NULL;

-- A reset link names the member who issued it (null: the operator), so that it dies when they are
-- removed or no longer an owner of the brand. Links issued before name their issuer by email.
ALTER TABLE password_resets ADD COLUMN issuer_member_id uuid;
UPDATE password_resets r SET issuer_member_id = i.id
  FROM members t, members i
  WHERE t.id = r.member_id AND i.brand_id = t.brand_id AND i.email = r.issued_by AND r.issued_by <> 'operator';
