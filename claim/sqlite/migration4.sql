-- Version 4 of the queuectl schema: what a dashboard and /metrics read at a
-- million jobs without counting them.

-- Counts per queue and state. They replace job_counts (per state), whose
-- totals are now sums over a handful of rows; a state change still writes
-- one counts row out and one in, so the claim pays nothing more.
CREATE TABLE queue_counts (
    queue TEXT    NOT NULL,
    state TEXT    NOT NULL,
    n     INTEGER NOT NULL,
    PRIMARY KEY (queue, state)
) WITHOUT ROWID;

INSERT INTO queue_counts (queue, state, n)
    SELECT queue, state, count(*) FROM jobs GROUP BY queue, state;

DROP TRIGGER job_counts_delete;
DROP TRIGGER job_counts_update;
DROP TABLE job_counts;

-- Inserts are counted by enqueue itself (see migration3.sql); a job's
-- queue never changes after it.
CREATE TRIGGER queue_counts_delete AFTER DELETE ON jobs BEGIN
    UPDATE queue_counts SET n = n - 1 WHERE queue = old.queue AND state = old.state;
END;

CREATE TRIGGER queue_counts_update AFTER UPDATE OF state ON jobs
WHEN old.state IS NOT new.state BEGIN
    UPDATE queue_counts SET n = n - 1 WHERE queue = old.queue AND state = old.state;
    INSERT OR IGNORE INTO queue_counts (queue, state, n) VALUES (new.queue, new.state, 0);
    UPDATE queue_counts SET n = n + 1 WHERE queue = new.queue AND state = new.state;
END;

-- A queue's jobs page by page, newest first, without reading other queues'.
-- Written only on enqueue and delete: a job's queue never changes.
CREATE INDEX jobs_queue ON jobs (queue, seq);

-- Runs by the time they ended, with their outcome: the runs-per-minute
-- chart reads only the index, and /metrics reads each new run once.
CREATE INDEX runs_ended ON runs (ended_at, outcome) WHERE ended_at IS NOT NULL;

-- When the run's command started, after its claim (started_at) and the
-- setting up of its logs: claim-to-start latency.
ALTER TABLE runs ADD COLUMN exec_at INTEGER;
