-- The per-topic steering inbox: messages sent while a turn runs, waiting to become the
-- next turn. Rows leave only when their turn has been admitted or the user cancels them.

CREATE TABLE inbox (
    id         TEXT PRIMARY KEY NOT NULL,
    topic_id   TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
    text       TEXT NOT NULL,
    mode       TEXT NOT NULL CHECK (mode IN ('queue', 'steer')),
    state      TEXT NOT NULL CHECK (state IN ('queued', 'held')),
    note       TEXT,
    position   INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX inbox_by_topic ON inbox (topic_id, position);
