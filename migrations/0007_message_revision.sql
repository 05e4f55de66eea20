-- Every write to a message row bumps its revision. An operation prepared from an earlier
-- read of a reply (retry, continue, resume after an approval) checks it when the turn is
-- admitted, and is refused if the reply changed in between (another window got there first).
ALTER TABLE messages ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;

-- Statements on the hot path bump it themselves; the trigger covers every other write.
CREATE TRIGGER messages_revision AFTER UPDATE ON messages
WHEN NEW.revision = OLD.revision
BEGIN
    UPDATE messages SET revision = OLD.revision + 1 WHERE rowid = NEW.rowid;
END;
