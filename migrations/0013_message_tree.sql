-- Messages form a tree: edits and regenerations keep every version.
--
-- A user message hangs under the previous turn's user message (NULL: the first turn), so
-- editing a message adds a sibling under the same parent and starts a new branch. A reply
-- hangs under its user message; the replies of one model to one user message are the
-- versions of that reply (regenerations). Among siblings, the active one is the one with
-- the highest `selected` (ties: the newest row). New rows and a switch take the topic's
-- highest `selected` plus one.
--
-- Until now a user message hung under whatever row came before it (usually a reply):
-- rewritten to the previous user message, so a linear history becomes a single path.
ALTER TABLE messages ADD COLUMN selected INTEGER NOT NULL DEFAULT 0;

UPDATE messages SET parent_id = ordered.previous
FROM (
    SELECT rowid AS row_number, LAG(id) OVER (PARTITION BY topic_id ORDER BY rowid) AS previous
    FROM messages WHERE role = 'user'
) AS ordered
WHERE messages.rowid = ordered.row_number;

CREATE INDEX messages_by_parent ON messages (parent_id);

-- Where a forked topic came from (the origin may be deleted later: no foreign key).
ALTER TABLE topics ADD COLUMN forked_from_topic_id TEXT;
ALTER TABLE topics ADD COLUMN forked_from_message_id TEXT;
