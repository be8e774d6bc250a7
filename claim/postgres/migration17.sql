-- Version 17 of the queuectl schema on PostgreSQL: the slots each worker
-- claims with, once it has applied a `worker scale`, as
-- claim/sqlite/migration20.sql.
ALTER TABLE workers ADD COLUMN slots_applied integer NOT NULL DEFAULT 0;
