-- Version 10 of the queuectl schema: the claim order within each queue.
--
-- The claim takes the best of each eligible queue's first runnable job,
-- one index probe a queue, so jobs that cannot be claimed (another queue
-- than the worker's, a paused queue, a queue at its limit) cost the claim
-- nothing however many they are. Walking jobs_runnable in order and
-- skipping those row by row held the write lock for as long as the skipped
-- backlog took to read.
CREATE INDEX jobs_queue_runnable ON jobs (queue, priority DESC, run_after, seq)
    WHERE state IN ('pending', 'failed') AND waiting = 0;
