-- Version 13 of the queuectl schema on PostgreSQL: the umask a job's shell
-- runs with, as claim/sqlite/migration17.sql.
ALTER TABLE jobs ADD COLUMN umask integer;
