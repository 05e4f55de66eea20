-- A reply's writes re-index only what can have changed.
--
-- Measured on the streams benchmark's replies (docs/benchmarks.md, "Where the index's
-- write cost went"), 0019's triggers did work that could not change the index:
--
-- - `message_cjk` was re-indexed on every re-index of a message, which computed the
--   searchable text a second time (the JSON view `message_search_text`, 0014) and tested
--   every character of it against the unspaced scripts, only to replace an empty row with
--   another empty row for a message without such text (most messages). Now the update of
--   `message_cjk` is a trigger of its own that runs only when the new parts have a
--   character of those scripts (or a `\u` escape, which could spell one) or the message's
--   row there is not empty; the insert trigger writes the empty row directly otherwise.
-- - Every change of status re-indexed the message, though the index is computed from the
--   parts alone: a status-only write (continuing a finished reply, a tool's approval)
--   re-indexed the whole reply for nothing. The one status change that needs it is a
--   reply leaving `pending`/`streaming`, whose row may lag its last 4 KB (0016).
--
-- `unspaced_pattern` is now the one declaration of 0019's character class (which
-- `search.rs`'s `is_unspaced` mirrors; a test checks both triggers against it), used by
-- `message_cjk_text` and by the triggers' cheap test of the raw parts. Nothing stored
-- changes: both FTS5 tables keep their rows, so no rebuild is needed.
DROP TRIGGER message_search_insert;
DROP TRIGGER message_search_update;
DROP VIEW message_cjk_text;

CREATE VIEW unspaced_pattern (pattern) AS
SELECT '*[' ||
    char(0x0E00) || '-' || char(0x0EFF) ||   -- Thai, Lao
    char(0x1000) || '-' || char(0x109F) ||   -- Myanmar
    char(0x1780) || '-' || char(0x17FF) ||   -- Khmer
    char(0x2E80) || '-' || char(0x9FFF) ||   -- CJK radicals, kana, ideographs
    char(0xAC00) || '-' || char(0xD7AF) ||   -- Hangul syllables
    char(0xF900) || '-' || char(0xFAFF) ||   -- CJK compatibility ideographs
    char(0xFF66) || '-' || char(0xFF9F) ||   -- half-width katakana
    char(0x20000) || '-' || char(0x2FFFF) || -- CJK extensions B and later
    ']*';

CREATE VIEW message_cjk_text (message_rowid, body) AS
SELECT message_rowid, CASE WHEN body GLOB (SELECT pattern FROM unspaced_pattern) THEN body ELSE '' END
FROM message_search_text;

CREATE TRIGGER message_search_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO message_words (rowid, body)
    SELECT message_rowid, body FROM message_search_text WHERE message_rowid = NEW.rowid;
    INSERT INTO message_cjk (rowid, body)
    SELECT NEW.rowid,
        CASE WHEN (length(NEW.parts) != octet_length(NEW.parts)
                AND NEW.parts GLOB (SELECT pattern FROM unspaced_pattern))
            OR instr(NEW.parts, '\u') > 0
            THEN coalesce((SELECT body FROM message_cjk_text WHERE message_rowid = NEW.rowid), '')
            ELSE ''
        END;
END;

-- 0019's rule for when a write re-indexes a message (a change of parts, unless the reply
-- stays pending or streaming, is over 4 KB and crossed no 4 KB boundary), and a reply
-- leaving pending/streaming instead of any change of status.
CREATE TRIGGER message_search_update AFTER UPDATE OF parts, status ON messages
WHEN (
        (
            NEW.status NOT IN ('pending', 'streaming')
            OR octet_length(NEW.parts) < 4096
            OR octet_length(NEW.parts) / 4096 != octet_length(OLD.parts) / 4096
        )
        AND NEW.parts IS NOT OLD.parts
    )
    OR (OLD.status IN ('pending', 'streaming') AND NEW.status NOT IN ('pending', 'streaming'))
BEGIN
    DELETE FROM message_words WHERE rowid = OLD.rowid;
    INSERT INTO message_words (rowid, body)
    SELECT message_rowid, body FROM message_search_text WHERE message_rowid = NEW.rowid;
END;

-- The same rule, and only when the message has unspaced text now or had it before.
CREATE TRIGGER message_search_update_cjk AFTER UPDATE OF parts, status ON messages
WHEN (
        (
            (
                NEW.status NOT IN ('pending', 'streaming')
                OR octet_length(NEW.parts) < 4096
                OR octet_length(NEW.parts) / 4096 != octet_length(OLD.parts) / 4096
            )
            AND NEW.parts IS NOT OLD.parts
        )
        OR (OLD.status IN ('pending', 'streaming') AND NEW.status NOT IN ('pending', 'streaming'))
    )
    AND (
        (length(NEW.parts) != octet_length(NEW.parts) AND NEW.parts GLOB (SELECT pattern FROM unspaced_pattern))
        OR instr(NEW.parts, '\u') > 0
        OR EXISTS (SELECT 1 FROM message_cjk_content WHERE id = OLD.rowid AND octet_length(c0) > 0)
    )
BEGIN
    DELETE FROM message_cjk WHERE rowid = OLD.rowid;
    INSERT INTO message_cjk (rowid, body)
    SELECT message_rowid, body FROM message_cjk_text WHERE message_rowid = NEW.rowid;
END;
