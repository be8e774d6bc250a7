-- Version 6 of the queuectl schema: dependencies, finish hooks, limits.
--
-- A job that waits for others ("after") keeps the count of those not yet
-- completed in waiting, and stays out of jobs_runnable until it is 0: a
-- hundred thousand waiting jobs cost the claim nothing. deps has one row
-- per dependency; a completion marks its rows met and counts its
-- dependents down, in its own transaction.
ALTER TABLE jobs ADD COLUMN waiting INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN dead_by TEXT; -- the dependency whose end made this job dead
ALTER TABLE jobs ADD COLUMN hooks TEXT;   -- {"on_success": …, "on_failure": …, "on_dead": …}, or NULL
ALTER TABLE jobs ADD COLUMN limits TEXT;  -- {"memory": "512M", …}, or NULL

ALTER TABLE runs ADD COLUMN hooks TEXT;    -- how each finish hook ended, a line each
ALTER TABLE runs ADD COLUMN confined TEXT; -- how limits were set: rlimit, cgroup+rlimit

CREATE TABLE deps (
    after_id TEXT    NOT NULL, -- the job waited for
    job_id   TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    met      INTEGER NOT NULL DEFAULT 0, -- after_id completed
    PRIMARY KEY (after_id, job_id)
) WITHOUT ROWID;
CREATE INDEX deps_job ON deps (job_id);

CREATE INDEX jobs_dead_by ON jobs (dead_by) WHERE dead_by IS NOT NULL;

DROP INDEX jobs_runnable;
CREATE INDEX jobs_runnable ON jobs (priority DESC, run_after, seq)
    WHERE state IN ('pending', 'failed') AND waiting = 0;
