-- Version 3 of the queuectl schema: enqueue counts its jobs itself.
--
-- A trigger makes SQLite keep a statement journal for every INSERT into
-- jobs (the trigger's write may need undoing), which cost a spool burst
-- more than the count it kept. Enqueue, the only INSERT into jobs, adds
-- the jobs it created to job_counts in the same transaction instead.
-- Updates and deletes are still counted by their triggers.
DROP TRIGGER job_counts_insert;
