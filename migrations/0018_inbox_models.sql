-- A message queued or steered while a turn runs keeps the models the user picked for it
-- (a JSON array of `{ providerId, model }`); NULL: the topic's own model, as before.

ALTER TABLE inbox ADD COLUMN models TEXT;
