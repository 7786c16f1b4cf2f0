-- What the receiver answered each attempt: the first 1 KiB of its body, as text (invalid UTF-8
-- replaced), shown read-only in the dashboard's delivery log beside the status. Null for attempts
-- with no answer (a refused connection, a timeout) and those recorded before this.
ALTER TABLE webhook_attempts ADD COLUMN response_body text;
