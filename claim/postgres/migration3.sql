-- Version 3 of the queuectl schema on PostgreSQL: the end of each run's
-- output, kept with the run, as SQLite's migration9.sql.

-- The last 64 KiB of each stream (NULL when it printed nothing) and how
-- many bytes it wrote in all (NULL: nothing kept). PostgreSQL keeps large
-- values out of line (TOAST), so the rows stay small for the statements
-- that do not name them.
ALTER TABLE runs ADD COLUMN stdout_size bigint;
ALTER TABLE runs ADD COLUMN stderr_size bigint;
ALTER TABLE runs ADD COLUMN stdout_tail bytea;
ALTER TABLE runs ADD COLUMN stderr_tail bytea;
