-- Who let a tool call run (or refused it): `user` (an answered approval), `rule:<id>`, or
-- `default` (the tool's default). A tool with extra guards applies them to calls only its
-- default allowed: fetch_url reaches addresses on the user's computer or local network
-- only when the user (or a rule of theirs) allowed the call.
ALTER TABLE tool_calls ADD COLUMN decided_by TEXT;

-- Calls the user answered before this column existed.
UPDATE tool_calls SET decided_by = 'user'
WHERE EXISTS (
    SELECT 1 FROM approvals a
    WHERE a.message_id = tool_calls.message_id AND a.call_id = tool_calls.call_id AND a.state != 'pending'
);
