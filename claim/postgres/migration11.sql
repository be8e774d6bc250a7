-- Version 11 of the queuectl schema on PostgreSQL: what a schedule's due
-- times did not make, as claim/sqlite/migration15.sql.
ALTER TABLE schedules ADD COLUMN last_skipped bigint;
ALTER TABLE schedules ADD COLUMN skip_reason text;
