-- Version 9 of the queuectl schema: the end of each run's output, kept with
-- the run (SPEC §9), so that `logs` and `show` can print it where the log
-- files are not: on another host, or after they were removed.

-- The last 64 KiB (claim.TailBytes) of the run's stdout and stderr, NULL
-- when the stream printed nothing; and how many bytes each stream wrote in
-- all: more than the tail holds means the tail is truncated. The sizes are
-- NULL when nothing was kept (the run has not ended, or was lost where no
-- reaper could read its files). The blobs come last in the row, so that
-- the statements that do not name them never read their overflow pages.
ALTER TABLE runs ADD COLUMN stdout_size INTEGER;
ALTER TABLE runs ADD COLUMN stderr_size INTEGER;
ALTER TABLE runs ADD COLUMN stdout_tail BLOB;
ALTER TABLE runs ADD COLUMN stderr_tail BLOB;
