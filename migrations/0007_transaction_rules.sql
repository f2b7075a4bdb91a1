-- StoreLedger schema, version 7: the rules of a transaction's life as tables (the same rows as
-- Swift's `TransactionRules`; a test compares them case by case), read by the triggers, which
-- now also guard what only Swift checked before: a refund only of a purchased or restored
-- transaction, once and for good (no transaction is created refunded); finishing only a
-- finishable state (a CHECK of 0001 already refused two of them); history rows that are legal
-- (an event of a known kind, a creation into an initial state, a state change that is a legal
-- transition, other events keeping the state, subscription events on subscriptions only).
CREATE TABLE rule_initial_states (
    state TEXT PRIMARY KEY NOT NULL
) WITHOUT ROWID;
INSERT INTO rule_initial_states (state) VALUES ('purchasing'), ('purchased'), ('restored');

CREATE TABLE rule_transitions (
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    PRIMARY KEY (from_state, to_state)
) WITHOUT ROWID;
INSERT INTO rule_transitions (from_state, to_state) VALUES
    ('purchasing', 'purchased'), ('purchasing', 'failed'), ('purchasing', 'deferred'),
    ('deferred', 'purchased'), ('deferred', 'failed');

CREATE TABLE rule_states (
    state      TEXT PRIMARY KEY NOT NULL,
    finishable INTEGER NOT NULL CHECK (finishable IN (0, 1)),
    revocable  INTEGER NOT NULL CHECK (revocable IN (0, 1))
) WITHOUT ROWID;
INSERT INTO rule_states (state, finishable, revocable) VALUES
    ('purchasing', 0, 0), ('purchased', 1, 1), ('failed', 1, 0), ('restored', 1, 1), ('deferred', 0, 0);

CREATE TABLE rule_events (
    kind              TEXT PRIMARY KEY NOT NULL,
    subscription_only INTEGER NOT NULL CHECK (subscription_only IN (0, 1))
) WITHOUT ROWID;
INSERT INTO rule_events (kind, subscription_only) VALUES
    ('created', 0), ('stateChanged', 0), ('finished', 0), ('delivered', 0), ('revoked', 0),
    ('expirationChanged', 1), ('upgraded', 1);

DROP TRIGGER transactions_insert_state;
CREATE TRIGGER transactions_insert_state
BEFORE INSERT ON transactions
WHEN NEW.state NOT IN (SELECT state FROM rule_initial_states) OR NEW.is_finished <> 0
  OR NEW.revocation_date IS NOT NULL OR NEW.revocation_reason IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'illegal initial transaction state');
END;

DROP TRIGGER transactions_legal_transition;
CREATE TRIGGER transactions_legal_transition
BEFORE UPDATE OF state ON transactions
WHEN OLD.state <> NEW.state
 AND NOT EXISTS (SELECT 1 FROM rule_transitions WHERE from_state = OLD.state AND to_state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'illegal transaction state transition');
END;

CREATE TRIGGER transactions_finish_rule
BEFORE UPDATE OF is_finished ON transactions
WHEN OLD.is_finished = 0 AND NEW.is_finished = 1
 AND NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.state AND finishable = 1)
BEGIN
    SELECT RAISE(ABORT, 'a transaction in this state cannot be finished');
END;

CREATE TRIGGER transactions_revocation_rule
BEFORE UPDATE OF revocation_date, revocation_reason ON transactions
WHEN (OLD.revocation_date IS NOT NEW.revocation_date OR OLD.revocation_reason IS NOT NEW.revocation_reason) AND (
       OLD.revocation_date IS NOT NULL
    OR NEW.revocation_date IS NULL
    OR NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.state AND revocable = 1))
BEGIN
    SELECT RAISE(ABORT, 'only a purchased or restored transaction can be refunded, and only once');
END;

CREATE TRIGGER transaction_events_legal_row
BEFORE INSERT ON transaction_events
WHEN NOT EXISTS (SELECT 1 FROM rule_events WHERE kind = NEW.kind)
  OR (NEW.kind = 'created' AND (NEW.from_state IS NOT NULL
                                OR NEW.to_state NOT IN (SELECT state FROM rule_initial_states)))
  OR (NEW.kind = 'stateChanged'
      AND NOT EXISTS (SELECT 1 FROM rule_transitions WHERE from_state = NEW.from_state AND to_state = NEW.to_state))
  OR (NEW.kind NOT IN ('created', 'stateChanged') AND NEW.from_state IS NOT NEW.to_state)
  OR (NEW.kind = 'finished' AND NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.to_state AND finishable = 1))
  OR (NEW.kind = 'revoked' AND NOT EXISTS (SELECT 1 FROM rule_states WHERE state = NEW.to_state AND revocable = 1))
  OR ((SELECT subscription_only FROM rule_events WHERE kind = NEW.kind) = 1
      AND (SELECT product_type FROM transactions WHERE id = NEW.transaction_id) IS NOT 'autoRenewable')
BEGIN
    SELECT RAISE(ABORT, 'illegal transaction history row');
END;
