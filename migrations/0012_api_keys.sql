-- StoreLedger schema, version 12: the App Store Server API's keys, as App Store Connect
-- issues them. Only a key's public half is kept (its P-256 public key, 65-byte x9.63 form):
-- `ledger serve` checks the ES256 bearer tokens a server signs with the private half. A
-- revoked key stays, dated, so that its identifier is never given to another key.
CREATE TABLE api_keys (
    key_id TEXT PRIMARY KEY CHECK (length(key_id) BETWEEN 1 AND 64),
    issuer_id TEXT NOT NULL CHECK (length(issuer_id) BETWEEN 1 AND 64),
    public_key BLOB NOT NULL CHECK (typeof(public_key) = 'blob' AND length(public_key) = 65),
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
) WITHOUT ROWID;
CREATE TRIGGER api_keys_keep_their_public_key BEFORE UPDATE OF key_id, issuer_id, public_key, created_at ON api_keys
BEGIN
    SELECT RAISE(ABORT, 'an API key is never changed, only revoked');
END;
CREATE TRIGGER api_keys_stay_revoked BEFORE UPDATE OF revoked_at ON api_keys
WHEN OLD.revoked_at IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'a revoked API key stays revoked');
END;
