-- StoreLedger schema, version 28: an empty `applicationUsername` is a username like any other.
-- Apple sets no length rule on `SKMutablePayment.applicationUsername`: a purchase and a restore
-- with "" succeed on a device. Migration 3 refused '' with a CHECK; the bound of 1,024 bytes
-- stays. Shipped migrations are never edited: a change to the schema is a new file.
--
-- SQLite cannot drop a CHECK with ALTER TABLE. Its documentation ("Making Other Kinds Of Table
-- Schema Changes", https://www.sqlite.org/lang_altertable.html) gives a procedure for removing a
-- CHECK without rebuilding the table, as the stored rows need no change: the table's definition
-- is rewritten in `sqlite_schema` with `writable_schema` on; `RESET` turns it off and makes this
-- connection read the new definition; the schema version is raised (the upgrade does that after
-- these statements, and checks that the rewrite took place) so that every other connection
-- reads it too. The rows, their digests and MACs, the
-- indexes and the triggers are untouched. (On PostgreSQL this is `ALTER TABLE transactions DROP
-- CONSTRAINT ...` and `ADD CONSTRAINT ... CHECK (octet_length(application_username) <= 1024)`.)
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, 'CHECK (application_username <> '''' AND length(', 'CHECK (length(')
 WHERE type = 'table' AND name = 'transactions';
PRAGMA writable_schema = RESET;
