-- Tools: where they may work (a topic's or assistant's workspace folder), which are on,
-- the approval policy rules, the approvals users answer, the tool-call ledger that keeps
-- every call to at most one run, and the audit log of every decision.

-- The folder file tools work in, and the assistant a topic talks to.
ALTER TABLE topics ADD COLUMN workspace TEXT;
ALTER TABLE topics ADD COLUMN assistant_id TEXT;

-- Saved setups: a system prompt, the models that answer, the tools they may call.
CREATE TABLE assistants (
    id             TEXT PRIMARY KEY NOT NULL,
    name           TEXT NOT NULL,
    system_prompt  TEXT NOT NULL DEFAULT '',
    -- JSON array of {providerId, model}.
    models         TEXT NOT NULL DEFAULT '[]',
    -- JSON array of tool names; NULL means every enabled tool.
    tools          TEXT,
    max_tool_calls INTEGER NOT NULL DEFAULT 20 CHECK (max_tool_calls BETWEEN 1 AND 100),
    workspace      TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);

-- What a model can do: JSON {"tools": bool, "reasoning": bool, "vision": bool}; NULL means
-- guessed from the model's name.
ALTER TABLE models ADD COLUMN capabilities TEXT;

-- Tools switched off by the user (every tool not listed is on).
CREATE TABLE tool_settings (
    tool_name TEXT PRIMARY KEY NOT NULL,
    enabled   INTEGER NOT NULL
);

CREATE TABLE tool_rules (
    id         TEXT PRIMARY KEY NOT NULL,
    -- A glob on the tool name.
    tool       TEXT NOT NULL,
    -- JSON array of {pointer, op, value}.
    conditions TEXT NOT NULL DEFAULT '[]',
    decision   TEXT NOT NULL CHECK (decision IN ('allow', 'deny', 'ask')),
    -- NULL: everywhere.
    topic_id   TEXT REFERENCES topics (id) ON DELETE CASCADE,
    expires_at TEXT,
    created_at TEXT NOT NULL
);

-- One row per tool call a model made. `state` only moves forward:
-- requested → approved | denied → running → done | error.
CREATE TABLE tool_calls (
    message_id TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    call_id    TEXT NOT NULL,
    topic_id   TEXT NOT NULL,
    tool_name  TEXT NOT NULL,
    input      TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('requested', 'approved', 'denied', 'running', 'done', 'error')),
    -- JSON tool output once done; the error text once failed; why it was denied.
    output     TEXT,
    error      TEXT,
    reason     TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (message_id, call_id)
);

-- Calls waiting for (or given) the user's decision.
CREATE TABLE approvals (
    id            TEXT PRIMARY KEY NOT NULL,
    topic_id      TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
    message_id    TEXT NOT NULL,
    call_id       TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    input         TEXT NOT NULL,
    preview       TEXT,
    state         TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied')),
    -- How far an approval reaches: once, topic, global.
    scope         TEXT,
    reason        TEXT,
    -- The input the user edited before allowing the call.
    updated_input TEXT,
    created_at    TEXT NOT NULL,
    decided_at    TEXT
);

CREATE INDEX approvals_by_state ON approvals (state, topic_id);
CREATE INDEX approvals_by_message ON approvals (message_id);

-- Every decision on a tool call: by the user, a rule, or a tool's default. Kept when the
-- topic goes (no foreign key): it is the record of what was allowed.
CREATE TABLE tool_audit (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        TEXT NOT NULL,
    actor     TEXT NOT NULL,
    decision  TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    input     TEXT NOT NULL,
    topic_id  TEXT NOT NULL,
    call_id   TEXT NOT NULL,
    reason    TEXT
);
