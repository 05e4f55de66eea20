-- Search through a word index; trigrams only for text written without spaces.
--
-- 0014's one trigram index (every three-character window of every message, and a copy of
-- its text) was 79 % of a database of 100,000 messages, and a query walked the lists of
-- every trigram in its words (docs/benchmarks.md). It is replaced by two FTS5 tables, both
-- rebuilt here from `messages` (nothing else is stored in them):
--
-- - `message_words`: every message's searchable text (`message_search_text`, 0014) as
--   words (`unicode61`: any case, accents ignored), with prefix indexes of two and three
--   characters so that a short prefix is one list, not the union of every word it
--   begins. Contentless: the text stays in `messages` alone, and `contentless_delete`
--   removes a row by its rowid, so a streaming reply's row in the index may lag its
--   message (0016) and still be replaced exactly.
-- - `message_cjk`: the trigram index of 0014, but only over messages with text in a
--   script written without spaces between words (Chinese, Japanese, Korean, Thai, Lao,
--   Myanmar, Khmer), where a word index sees one long word and cannot find a word inside
--   it. Every other message has an empty row there (no trigrams), so both tables hold a
--   row per message and the start-up check compares each with `messages`.
--
-- `message_cjk_text` declares which text goes to `message_cjk`: the character class below,
-- which `search.rs`'s `is_unspaced` mirrors (a test checks that they agree).
DROP TRIGGER message_search_insert;
DROP TRIGGER message_search_update;
DROP TRIGGER message_search_delete;
DROP TABLE message_search;

CREATE VIEW message_cjk_text (message_rowid, body) AS
SELECT
    message_rowid,
    CASE WHEN body GLOB '*[' ||
            char(0x0E00) || '-' || char(0x0EFF) ||   -- Thai, Lao
            char(0x1000) || '-' || char(0x109F) ||   -- Myanmar
            char(0x1780) || '-' || char(0x17FF) ||   -- Khmer
            char(0x2E80) || '-' || char(0x9FFF) ||   -- CJK radicals, kana, ideographs
            char(0xAC00) || '-' || char(0xD7AF) ||   -- Hangul syllables
            char(0xF900) || '-' || char(0xFAFF) ||   -- CJK compatibility ideographs
            char(0xFF66) || '-' || char(0xFF9F) ||   -- half-width katakana
            char(0x20000) || '-' || char(0x2FFFF) || -- CJK extensions B and later
            ']*'
        THEN body ELSE '' END
FROM message_search_text;

CREATE VIRTUAL TABLE message_words USING fts5 (
    body,
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3',
    content = '',
    contentless_delete = 1
);

CREATE VIRTUAL TABLE message_cjk USING fts5 (
    body,
    tokenize = 'trigram case_sensitive 0 remove_diacritics 1'
);

INSERT INTO message_words (rowid, body) SELECT message_rowid, body FROM message_search_text;
INSERT INTO message_cjk (rowid, body) SELECT message_rowid, body FROM message_cjk_text;
-- One segment per table after a bulk fill: smaller, and each list is read in one piece.
INSERT INTO message_words (message_words) VALUES ('optimize');
INSERT INTO message_cjk (message_cjk) VALUES ('optimize');

CREATE TRIGGER message_search_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO message_words (rowid, body)
    SELECT message_rowid, body FROM message_search_text WHERE message_rowid = NEW.rowid;
    INSERT INTO message_cjk (rowid, body)
    SELECT message_rowid, body FROM message_cjk_text WHERE message_rowid = NEW.rowid;
END;

-- When a write re-indexes a message: 0016's rule (a change of status; a change of parts
-- unless the reply stays pending or streaming, is over 4 KB and crossed no 4 KB boundary),
-- in bytes, and asked so that a checkpoint that re-indexes nothing reads only lengths:
-- 0016's `length()` counted the characters of the old and the new parts at every
-- checkpoint (about 120 µs per update of a 16-32 KB row, measured apart; see
-- docs/benchmarks.md), while `octet_length()` is known without reading the text.
CREATE TRIGGER message_search_update AFTER UPDATE OF parts, status ON messages
WHEN NEW.status IS NOT OLD.status
    OR (
        (
            NEW.status NOT IN ('pending', 'streaming')
            OR octet_length(NEW.parts) < 4096
            OR octet_length(NEW.parts) / 4096 != octet_length(OLD.parts) / 4096
        )
        AND NEW.parts IS NOT OLD.parts
    )
BEGIN
    DELETE FROM message_words WHERE rowid = OLD.rowid;
    INSERT INTO message_words (rowid, body)
    SELECT message_rowid, body FROM message_search_text WHERE message_rowid = NEW.rowid;
    DELETE FROM message_cjk WHERE rowid = OLD.rowid;
    INSERT INTO message_cjk (rowid, body)
    SELECT message_rowid, body FROM message_cjk_text WHERE message_rowid = NEW.rowid;
END;

CREATE TRIGGER message_search_delete AFTER DELETE ON messages
BEGIN
    DELETE FROM message_words WHERE rowid = OLD.rowid;
    DELETE FROM message_cjk WHERE rowid = OLD.rowid;
END;
