-- Full-text search over messages.
--
-- `message_search_text` is the one declaration of what a message's searchable text is:
-- its text and reasoning parts, each tool call's name and arguments, and attached files'
-- names, one piece per line. Rows whose parts are not valid JSON (a damaged or very old
-- row) have no text rather than making the write fail.
--
-- `message_search` holds that text (row id = the message's rowid) in an FTS5 index with
-- the trigram tokenizer: any substring of three or more characters is found, which gives
-- prefix matching for free and finds Chinese, Japanese and Korean text, which has no
-- spaces between words for a word tokenizer to split on.
--
-- The triggers keep the index in the same transaction as every write to `messages`
-- (new turns and replies, checkpoints, final states, forks, deletes and cascades).
CREATE VIEW message_search_text (message_rowid, body) AS
SELECT
    m.rowid,
    coalesce((
        SELECT group_concat(piece, char(10))
        FROM (
            SELECT CASE json_extract(part.value, '$.type')
                WHEN 'text' THEN json_extract(part.value, '$.text')
                WHEN 'reasoning' THEN json_extract(part.value, '$.text')
                WHEN 'dynamic-tool' THEN
                    coalesce(json_extract(part.value, '$.toolName'), '') || ' ' ||
                    coalesce(json_extract(part.value, '$.input'), '')
                WHEN 'file' THEN json_extract(part.value, '$.filename')
            END AS piece
            FROM json_each(CASE WHEN json_valid(m.parts) THEN m.parts ELSE '[]' END) AS part
            WHERE part.type = 'object'
        )
        WHERE piece IS NOT NULL AND piece != ''
    ), '') AS body
FROM messages AS m;

CREATE VIRTUAL TABLE message_search USING fts5 (
    body,
    tokenize = 'trigram case_sensitive 0 remove_diacritics 1'
);

INSERT INTO message_search (rowid, body) SELECT message_rowid, body FROM message_search_text;

CREATE TRIGGER message_search_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO message_search (rowid, body)
    SELECT message_rowid, body FROM message_search_text WHERE message_rowid = NEW.rowid;
END;

CREATE TRIGGER message_search_update AFTER UPDATE OF parts ON messages
WHEN NEW.parts IS NOT OLD.parts
BEGIN
    DELETE FROM message_search WHERE rowid = OLD.rowid;
    INSERT INTO message_search (rowid, body)
    SELECT message_rowid, body FROM message_search_text WHERE message_rowid = NEW.rowid;
END;

CREATE TRIGGER message_search_delete AFTER DELETE ON messages
BEGIN
    DELETE FROM message_search WHERE rowid = OLD.rowid;
END;
