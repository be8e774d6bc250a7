-- Version 13 of the queuectl schema: why pending jobs wait, counted from
-- indexes.
--
-- `status` counts the pending jobs scheduled for later and those waiting on
-- others per queue; the rest of a queue's pending jobs come from
-- queue_counts. Through these indexes a count reads only the scheduled or
-- waiting jobs, not every pending one (a million runnable jobs took
-- `status` from milliseconds to most of a second).
CREATE INDEX jobs_pending_at ON jobs (queue, run_after) WHERE state = 'pending';
CREATE INDEX jobs_pending_waiting ON jobs (queue, run_after) WHERE state = 'pending' AND waiting > 0;
