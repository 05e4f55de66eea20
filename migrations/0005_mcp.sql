-- MCP servers the user added, and the last tool list each one reported. Building a
-- request reads only this cache, so a slow or broken server never holds up a chat.

CREATE TABLE mcp_servers (
    id              TEXT PRIMARY KEY NOT NULL,
    name            TEXT NOT NULL,
    -- JSON: {"kind": "stdio", "command", "args", "env", "cwd"} or {"kind": "http", "url", "headers"}.
    transport       TEXT NOT NULL,
    enabled         INTEGER NOT NULL DEFAULT 1,
    -- Let tools the server marks read-only run without asking.
    trust_read_only INTEGER NOT NULL DEFAULT 0,
    -- Seconds one call may take.
    timeout_secs    INTEGER NOT NULL DEFAULT 60,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

CREATE TABLE mcp_tools (
    server_id     TEXT NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    -- The tool's own name on its server.
    name          TEXT NOT NULL,
    title         TEXT,
    description   TEXT NOT NULL DEFAULT '',
    input_schema  TEXT NOT NULL,
    -- JSON ToolAnnotations.
    annotations   TEXT NOT NULL DEFAULT '{}',
    position      INTEGER NOT NULL,
    PRIMARY KEY (server_id, name)
);
