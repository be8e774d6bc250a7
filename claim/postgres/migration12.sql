-- Version 12 of the queuectl schema on PostgreSQL: the lease and heartbeat
-- interval each worker runs with, as claim/sqlite/migration16.sql.
ALTER TABLE workers ADD COLUMN lease_ns bigint NOT NULL DEFAULT 0;
ALTER TABLE workers ADD COLUMN heartbeat_ns bigint NOT NULL DEFAULT 0;
