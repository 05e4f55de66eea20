-- Agent sessions: conversations with an external coding agent. Each is a topic (id
-- `agent-session:<id>`) whose replies come from the agent; this row says how to run it.

CREATE TABLE agent_sessions (
    id              TEXT PRIMARY KEY NOT NULL,
    topic_id        TEXT NOT NULL UNIQUE REFERENCES topics (id) ON DELETE CASCADE,
    -- Which agent: `claude_code`.
    agent           TEXT NOT NULL DEFAULT 'claude_code',
    -- The folder the agent works in.
    workspace       TEXT NOT NULL,
    -- An Anthropic-format provider whose address and key the agent uses; NULL: the
    -- agent's own login.
    provider_id     TEXT,
    model           TEXT NOT NULL DEFAULT '',
    permission_mode TEXT NOT NULL DEFAULT 'default',
    -- The agent's own session id, to resume it with; NULL starts a fresh one.
    resume_token    TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
