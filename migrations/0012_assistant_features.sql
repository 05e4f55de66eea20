-- The reply strategies (features, by registered name) an assistant's turns use: JSON
-- array of names. NULL means the defaults; assistants from before this version keep them.
ALTER TABLE assistants ADD COLUMN features TEXT;
