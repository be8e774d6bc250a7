-- Version 1 of the queuectl schema. Later versions are migrationN.sql files,
-- listed in sqlite.go's migrations; this file's statements never change once released.
--
-- Times are integer Unix nanoseconds (UTC), so ORDER BY on them is exact.

CREATE TABLE jobs (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT, -- enqueue order
    id           TEXT    NOT NULL UNIQUE,
    command      TEXT    NOT NULL,
    state        TEXT    NOT NULL,
    queue        TEXT    NOT NULL DEFAULT 'default',
    priority     INTEGER NOT NULL DEFAULT 0,
    attempts     INTEGER NOT NULL DEFAULT 0, -- runs that count towards max_retries
    max_retries  INTEGER NOT NULL,
    backoff_base INTEGER NOT NULL,
    runs         INTEGER NOT NULL DEFAULT 0, -- every run ever started; names log files
    lost         INTEGER NOT NULL DEFAULT 0, -- runs lost to crashed workers
    timeout_ns   INTEGER NOT NULL DEFAULT 0,
    env          TEXT,                       -- JSON object, or NULL
    cwd          TEXT,
    unique_key   TEXT,
    ingest_key   TEXT UNIQUE,                -- spool file identity, so a re-seen file is no second job
    run_at       INTEGER,                    -- as asked by the spec (run_at or delay), or NULL
    run_after    INTEGER NOT NULL,           -- not claimable before this
    worker_id    TEXT,
    lease_until  INTEGER,
    last_error   TEXT,
    exit_code    INTEGER,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    finished_at  INTEGER
);

-- The claim order. Partial, so a million finished jobs cost the claim nothing.
CREATE INDEX jobs_runnable ON jobs (priority DESC, run_after, seq)
    WHERE state IN ('pending', 'failed');

CREATE INDEX jobs_state ON jobs (state, seq);

CREATE INDEX jobs_worker ON jobs (worker_id) WHERE state = 'processing';

-- At most one live job per unique_key: enforced by SQLite, not by a racy check.
CREATE UNIQUE INDEX jobs_unique_key ON jobs (unique_key)
    WHERE unique_key IS NOT NULL AND state IN ('pending', 'processing', 'failed');

CREATE TABLE runs (
    job_id      TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL, -- the job's run number, 1-based
    worker_id   TEXT    NOT NULL,
    host        TEXT    NOT NULL,
    pid         INTEGER NOT NULL, -- the worker process
    pgid        INTEGER,          -- the job's process group, once started
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER,
    outcome     TEXT,             -- completed, failed, lost, interrupted
    exit_code   INTEGER,
    error       TEXT,
    stdout_path TEXT,
    stderr_path TEXT,
    PRIMARY KEY (job_id, attempt)
);

CREATE TABLE workers (
    id           TEXT    PRIMARY KEY,
    host         TEXT    NOT NULL,
    pid          INTEGER NOT NULL,
    slots        INTEGER NOT NULL,
    queues       TEXT    NOT NULL DEFAULT '',
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    stopping     INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE config (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
