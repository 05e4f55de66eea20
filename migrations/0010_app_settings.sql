-- Settings that apply to the whole app (not to a topic, provider or assistant), one row
-- per setting the user changed; a missing row means the default applies. `value` is JSON.

CREATE TABLE app_settings (
    key        TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
