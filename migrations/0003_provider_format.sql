-- Providers speak one of several wire formats; every provider saved before this
-- migration spoke OpenAI Chat Completions.
ALTER TABLE providers ADD COLUMN format TEXT NOT NULL DEFAULT 'openai_chat';
