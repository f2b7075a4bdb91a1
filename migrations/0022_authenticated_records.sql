-- StoreLedger schema, version 22: the facts kept beside the hash chain are authenticated.
-- Shipped migrations are never edited: a change to the schema is a new file.
--
-- A family share, an app account token, a prorated refund's part, a price increase, a charged
-- price, an API key and a notification reach a signature or an access decision, and none is an
-- event of the chain. Each row carries a MAC made with the ledger's event key (what its
-- columns say, and which table it is in: docs/HASH-CHAIN.md), so that a row inserted or
-- edited without the key is refused where it is used and reported by `verify`. Each table has
-- a seal: how many rows it has and the XOR of their MACs, authenticated the same way, so that a
-- row deleted, added or put back as it was before is reported too. The migration
-- authenticates the rows already there, as migration 10 trusted the history it chained.
ALTER TABLE api_keys ADD COLUMN mac BLOB CHECK (mac IS NULL OR length(mac) = 32);
ALTER TABLE family_shares ADD COLUMN mac BLOB CHECK (mac IS NULL OR length(mac) = 32);
ALTER TABLE app_account_tokens ADD COLUMN mac BLOB CHECK (mac IS NULL OR length(mac) = 32);
ALTER TABLE refund_portions ADD COLUMN mac BLOB CHECK (mac IS NULL OR length(mac) = 32);
ALTER TABLE price_increases ADD COLUMN mac BLOB CHECK (mac IS NULL OR length(mac) = 32);
ALTER TABLE charged_prices ADD COLUMN mac BLOB CHECK (mac IS NULL OR length(mac) = 32);
ALTER TABLE notifications ADD COLUMN mac BLOB CHECK (mac IS NULL OR length(mac) = 32);

CREATE TABLE record_seals (
    table_name TEXT PRIMARY KEY NOT NULL,
    row_count  INTEGER NOT NULL CHECK (row_count >= 0),
    digest     BLOB NOT NULL CHECK (length(digest) = 32),
    mac        BLOB NOT NULL CHECK (length(mac) = 32)
) WITHOUT ROWID;
