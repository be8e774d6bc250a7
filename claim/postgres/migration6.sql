-- Version 6 of the queuectl schema on PostgreSQL: why pending jobs wait,
-- counted from indexes, as SQLite's migration13.sql.
CREATE INDEX jobs_pending_at ON jobs (queue, run_after) WHERE state = 'pending';
CREATE INDEX jobs_pending_waiting ON jobs (queue, run_after) WHERE state = 'pending' AND waiting > 0;
