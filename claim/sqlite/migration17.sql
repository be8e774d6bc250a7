-- Version 17 of the queuectl schema: the umask a job's shell runs with.
--
-- `run` stands in for its command run in the caller's shell, which creates
-- files under the caller's umask; the job carries that umask, and the
-- worker sets it in the job's shell. NULL: the worker's own umask, as for
-- every job of an older queuectl, and every job not made by `run`.
ALTER TABLE jobs ADD COLUMN umask INTEGER;
