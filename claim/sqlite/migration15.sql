-- Version 15 of the queuectl schema: what a schedule's due times did not
-- make.
--
-- last_skipped and skip_reason are the last due time that made no job of
-- its own and why (claim.SkipOverlap, SkipMissed, SkipRefused), for
-- `schedule list`: "why didn't my nightly job run" has an answer there.
ALTER TABLE schedules ADD COLUMN last_skipped INTEGER;
ALTER TABLE schedules ADD COLUMN skip_reason TEXT;
