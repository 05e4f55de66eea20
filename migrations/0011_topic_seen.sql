-- When the user last looked at each topic: a topic whose latest reply was written after
-- it is "unseen" (it finished while the user looked elsewhere), across restarts too.
-- NULL: never looked at. Topics from before this version count as seen now.

ALTER TABLE topics ADD COLUMN seen_at TEXT;
UPDATE topics SET seen_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
