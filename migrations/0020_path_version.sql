-- `topics.path_version` changes whenever the topic's active path may have: a message added
-- or removed, or its place in the tree changed (topic, parent, role, `selected`, model).
-- `Store::path_page` keeps a topic's path worked out in memory and uses it while this
-- number is unchanged, instead of reading every row of the topic for each page.
--
-- The numbers come from one clock that only goes forward, and a topic takes a fresh one
-- when it is created, so a topic deleted and created again under the same id never shows
-- a number its old path was kept under. Writes that only change a reply's text or status
-- (every checkpoint) leave it alone.
CREATE TABLE path_clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);
INSERT INTO path_clock (id, value) VALUES (1, 0);

ALTER TABLE topics ADD COLUMN path_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER topic_path_new AFTER INSERT ON topics
BEGIN
    UPDATE path_clock SET value = value + 1 WHERE id = 1;
    UPDATE topics SET path_version = (SELECT value FROM path_clock WHERE id = 1) WHERE rowid = NEW.rowid;
END;

CREATE TRIGGER topic_path_insert AFTER INSERT ON messages
BEGIN
    UPDATE path_clock SET value = value + 1 WHERE id = 1;
    UPDATE topics SET path_version = (SELECT value FROM path_clock WHERE id = 1) WHERE id = NEW.topic_id;
END;

CREATE TRIGGER topic_path_delete AFTER DELETE ON messages
BEGIN
    UPDATE path_clock SET value = value + 1 WHERE id = 1;
    UPDATE topics SET path_version = (SELECT value FROM path_clock WHERE id = 1) WHERE id = OLD.topic_id;
END;

CREATE TRIGGER topic_path_update AFTER UPDATE OF topic_id, parent_id, role, selected, provider_id, model_name ON messages
BEGIN
    UPDATE path_clock SET value = value + 1 WHERE id = 1;
    UPDATE topics SET path_version = (SELECT value FROM path_clock WHERE id = 1) WHERE id IN (OLD.topic_id, NEW.topic_id);
END;
