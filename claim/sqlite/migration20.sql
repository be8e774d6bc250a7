-- Version 20 of the queuectl schema: the slots each worker claims with.
--
-- `worker scale N` sets a worker's slots in its row; the worker reads the
-- row when the store changes and applies it. Until it has, it claims with
-- the count it had, so a `worker scale 1` followed at once by enqueues
-- could see them all start. The worker records here the count it claims
-- with once it has applied one, and `worker scale` returns when each live
-- worker's slots_applied is what it set: from then on the count holds.
-- 0 is a row of an older queuectl, which never says.
ALTER TABLE workers ADD COLUMN slots_applied INTEGER NOT NULL DEFAULT 0;
