-- StoreLedger schema, version 21: why a notification's attempt failed, in words.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- Apple's sendAttemptResult names the kind of failure (OTHER, UNSUCCESSFUL_HTTP_RESPONSE_CODE);
-- the detail says what happened, for the team reading `ledger notifications show`: a notification
-- URL that cannot be used and why, a redirect not followed and where it pointed. NULL for an
-- attempt that needs no words (a success, a status the HTTP code says all of).
ALTER TABLE notification_attempts ADD COLUMN detail TEXT CHECK (detail IS NULL OR length(detail) BETWEEN 1 AND 512);
