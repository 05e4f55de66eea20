-- The usage ledger: one row per model call (each step of the agent loop, each retried
-- attempt) and one per agent-session turn, with what it used and how long it took. No
-- foreign keys: what was spent stays in the reports when a topic or reply is deleted.
CREATE TABLE usage_calls (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    topic_id          TEXT NOT NULL,
    message_id        TEXT NOT NULL,
    -- `model`: a call the agent loop made; `agent`: an agent session's turn, as the agent
    -- reported it (its own total over the calls it made).
    kind              TEXT NOT NULL CHECK (kind IN ('model', 'agent')),
    -- The loop's step (0 first) and attempt at it (0 first; a retry counts up).
    step              INTEGER NOT NULL DEFAULT 0,
    attempt           INTEGER NOT NULL DEFAULT 0,
    provider_id       TEXT,
    provider_name     TEXT NOT NULL DEFAULT '',
    model             TEXT NOT NULL,
    -- `input_tokens` includes `cached_tokens`; `output_tokens` includes `reasoning_tokens`.
    input_tokens      INTEGER NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens     INTEGER NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    reasoning_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (reasoning_tokens >= 0),
    cached_tokens     INTEGER NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0),
    -- What was sent: messages, and their size in characters.
    request_messages  INTEGER,
    request_chars     INTEGER,
    started_at        TEXT NOT NULL,
    ttft_ms           INTEGER,
    duration_ms       INTEGER NOT NULL DEFAULT 0,
    -- Retries the provider client made before the first byte (rate limits, overload).
    provider_retries  INTEGER NOT NULL DEFAULT 0,
    -- `stop`, `length`, `tool_calls`, `content_filter`, a provider's own reason, or
    -- `stopped` / `stalled` / `failed` (then `error` says why).
    finish            TEXT NOT NULL,
    error             TEXT,
    -- A cost the agent reported itself, in USD; NULL: priced from the price table.
    reported_cost_usd REAL
);

CREATE INDEX usage_calls_by_message ON usage_calls (message_id);
CREATE INDEX usage_calls_by_topic ON usage_calls (topic_id);
CREATE INDEX usage_calls_by_time ON usage_calls (started_at);

-- Prices the user set, in USD per million tokens, by model name. Models without a row use
-- the built-in defaults (if any); a model with neither shows tokens only.
CREATE TABLE model_prices (
    model            TEXT PRIMARY KEY NOT NULL,
    input_usd        REAL NOT NULL CHECK (input_usd >= 0),
    output_usd       REAL NOT NULL CHECK (output_usd >= 0),
    -- Tokens read from the prompt cache; NULL: the input price.
    cached_input_usd REAL CHECK (cached_input_usd IS NULL OR cached_input_usd >= 0),
    updated_at       TEXT NOT NULL
);

-- When a tool call started running and how long it ran (the reply inspector's timeline).
ALTER TABLE tool_calls ADD COLUMN started_at TEXT;
ALTER TABLE tool_calls ADD COLUMN duration_ms INTEGER;
