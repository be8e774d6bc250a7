-- Version 10 of the queuectl schema on PostgreSQL: whose rule a schedule's
-- next due time follows, as claim/sqlite/migration14.sql.
ALTER TABLE schedules ADD COLUMN due_checked boolean NOT NULL DEFAULT false;
