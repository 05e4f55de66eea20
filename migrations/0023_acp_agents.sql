-- Coding agents reached over the Agent Client Protocol: how to start each. A session
-- runs one (`agent_sessions.agent = 'acp'` with `acp_agent_id`); Claude Code sessions
-- keep `claude_code` and no agent id, so every existing session stays as it was.

CREATE TABLE acp_agents (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL,
    command     TEXT NOT NULL,
    -- JSON list of strings.
    args        TEXT NOT NULL DEFAULT '[]',
    -- JSON list of { name, secret, value? }: a secret variable's value is in the secret
    -- store (`acp/<id>/env/<name>`), never here.
    variables   TEXT NOT NULL DEFAULT '[]',
    -- The folder new sessions with this agent work in, when they name none.
    workspace   TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

ALTER TABLE agent_sessions ADD COLUMN acp_agent_id TEXT;
