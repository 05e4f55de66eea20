-- A topic's own system prompt and sampling settings, and an assistant's sampling
-- settings. `model_params` is a JSON object (`ModelParams`); NULL means none set.

ALTER TABLE topics ADD COLUMN system_prompt TEXT;
ALTER TABLE topics ADD COLUMN model_params TEXT;
ALTER TABLE assistants ADD COLUMN model_params TEXT;
