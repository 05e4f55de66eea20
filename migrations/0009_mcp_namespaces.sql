-- Each MCP server's tools are named `<namespace>__<tool>`. The namespace is chosen once,
-- when the server is added (unique among servers), and kept: renaming a server or
-- removing another one never renames its tools, so per-tool switches and approval rules
-- stay with the tools they were made for. Rows from before get theirs at the next start,
-- in the order they were added, which gives each the prefix its tools already had.
ALTER TABLE mcp_servers ADD COLUMN namespace TEXT;
CREATE UNIQUE INDEX mcp_servers_namespace ON mcp_servers (namespace);

-- From this version `transport` holds the names of a server's environment variables and
-- HTTP headers only ({"kind": "stdio", "command", "args", "envNames", "cwd"} or
-- {"kind": "http", "url", "headerNames"}); their values are in the secret store. Values
-- an earlier version kept here ("env", "headers") are moved there at start.
