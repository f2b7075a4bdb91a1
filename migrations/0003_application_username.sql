-- StoreLedger schema, version 3: StoreKit 1's applicationUsername.
-- An opaque string of the app's (a hashed account name, say), kept as given: it scopes
-- restores. It is also the app account token when it parses as a UUID.
ALTER TABLE transactions ADD COLUMN application_username TEXT
    CHECK (application_username <> '' AND length(CAST(application_username AS BLOB)) <= 1024);
