-- Version 4 of the queuectl schema on PostgreSQL: the claim order within
-- each queue, as SQLite's migration10.sql. The claim locks each runnable
-- queue's first job it can take and keeps the best, so jobs it may not take
-- (another queue than the worker's, a paused queue, a queue at its limit)
-- are never read, however many they are. jobs_runnable, the one claim
-- order across queues, has no reader left.
DROP INDEX jobs_runnable;
CREATE INDEX jobs_queue_runnable ON jobs (queue, priority DESC, run_after, seq)
    WHERE state IN ('pending', 'failed') AND waiting = 0;
