-- Colloquy's first schema: topics, messages (a tree with sibling groups for multi-model
-- turns), providers and their models. Message content is the UI message parts as JSON.

CREATE TABLE topics (
    id          TEXT PRIMARY KEY NOT NULL,
    title       TEXT NOT NULL,
    provider_id TEXT,
    model_name  TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE providers (
    id            TEXT PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL,
    kind          TEXT NOT NULL,
    base_url      TEXT NOT NULL,
    default_model TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

CREATE TABLE models (
    provider_id TEXT NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    position    INTEGER NOT NULL,
    PRIMARY KEY (provider_id, name)
);

CREATE TABLE messages (
    -- rowid orders messages within a topic: rows are only ever appended.
    id                TEXT NOT NULL UNIQUE,
    topic_id          TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
    parent_id         TEXT,
    turn_id           TEXT,
    siblings_group_id TEXT,
    role              TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    status            TEXT NOT NULL CHECK (status IN ('pending', 'streaming', 'success', 'paused', 'error')),
    status_reason     TEXT,
    provider_id       TEXT,
    model_name        TEXT,
    parts             TEXT NOT NULL DEFAULT '[]',
    metadata          TEXT NOT NULL DEFAULT '{}',
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);

CREATE INDEX messages_by_topic ON messages (topic_id);
CREATE INDEX messages_by_status ON messages (status) WHERE status IN ('pending', 'streaming');
