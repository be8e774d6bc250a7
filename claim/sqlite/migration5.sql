-- Version 5 of the queuectl schema: recurring jobs.
--
-- A schedule fires by moving next_due forward in the same transaction that
-- enqueues its job, and only if next_due still holds the value the worker
-- read: of many workers, exactly one makes each due time's job.
CREATE TABLE schedules (
    name       TEXT    PRIMARY KEY,
    cron       TEXT    NOT NULL,
    tz         TEXT    NOT NULL DEFAULT '',
    spec       TEXT    NOT NULL,          -- the job spec (JSON) each run is made from
    paused     INTEGER NOT NULL DEFAULT 0,
    file       INTEGER NOT NULL DEFAULT 0, -- defined by schedules/<name>.json
    next_due   INTEGER NOT NULL,
    last_job   TEXT,                      -- the job the last due time made, or found holding the key
    last_due   INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
