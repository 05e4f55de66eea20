-- A streaming reply is re-indexed as it grows, not at every checkpoint.
--
-- Each checkpoint of a streaming reply rewrote its whole text into the index, so the
-- cost of a checkpoint grew with the reply (6x a checkpoint without the index at 32 KB,
-- see docs/benchmarks.md). Now a checkpoint of a reply that stays `pending` or
-- `streaming` re-indexes it only while the reply is small (parts under 4 KB) or when it
-- crosses another 4 KB. Every other write re-indexes as before, and a change of status
-- (the final state: success, paused, error) always does. So the index is exact for every
-- message that is not being written, and a streaming reply is found by all of its text
-- but at most the last 4 KB.
DROP TRIGGER message_search_update;

CREATE TRIGGER message_search_update AFTER UPDATE OF parts, status ON messages
WHEN (NEW.parts IS NOT OLD.parts OR NEW.status IS NOT OLD.status)
    AND (
        NEW.status IS NOT OLD.status
        OR NEW.status NOT IN ('pending', 'streaming')
        OR length(NEW.parts) < 4096
        OR length(NEW.parts) / 4096 != length(OLD.parts) / 4096
    )
BEGIN
    DELETE FROM message_search WHERE rowid = OLD.rowid;
    INSERT INTO message_search (rowid, body)
    SELECT message_rowid, body FROM message_search_text WHERE message_rowid = NEW.rowid;
END;
