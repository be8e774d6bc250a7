-- Version 8 of the queuectl schema: steering jobs (cancel, pause).

-- When `cancel` was asked of the job. A pending or failed job is canceled
-- at once; a processing one keeps running until its worker has stopped its
-- processes, and every statement that ends its run ends the job canceled
-- (claim.go, lease.go), so that no race with a completion, a failure or a
-- crash can run it again. Cleared by restart.
ALTER TABLE jobs ADD COLUMN cancel_at INTEGER;

-- Queues no worker claims from, until resumed; '*' pauses every queue
-- (queue names are job ids, which cannot be '*'). The claim statement
-- itself reads this table, so a pause holds from its commit on, in every
-- process.
CREATE TABLE paused_queues (
    queue     TEXT    PRIMARY KEY,
    paused_at INTEGER NOT NULL
) WITHOUT ROWID;
