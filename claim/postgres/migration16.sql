-- Version 16 of the queuectl schema on PostgreSQL: which process each
-- worker is (when it started, in clock ticks after its host's boot), as
-- claim/sqlite/migration19.sql.
ALTER TABLE workers ADD COLUMN pid_start bigint NOT NULL DEFAULT 0;
