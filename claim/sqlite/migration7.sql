-- Version 7 of the queuectl schema: per-queue concurrency limits.

-- At most max_running jobs of a queue are processing at once, across every
-- worker, process and host sharing the store; 0 means no limit. The claim
-- statement reads this table and queue_counts (kept in the claim's own
-- transaction), so a limit holds from its commit on, in every process.
CREATE TABLE queue_limits (
    queue       TEXT    PRIMARY KEY,
    max_running INTEGER NOT NULL CHECK (max_running >= 0),
    updated_at  INTEGER NOT NULL
) WITHOUT ROWID;
