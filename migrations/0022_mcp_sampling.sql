-- An MCP server that may ask the reply's model for completions (MCP sampling) without
-- asking the user each time ("Always allow" on its sampling card, or Settings → MCP).
ALTER TABLE mcp_servers ADD COLUMN sampling_allowed INTEGER NOT NULL DEFAULT 0;
