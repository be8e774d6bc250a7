-- Version 14 of the queuectl schema: whose rule a schedule's next due time
-- follows.
--
-- due_checked says that next_due was computed by a worker
-- of this rule, in the time zone it fires in: until then, a worker
-- recomputes it from updated_at (a release that read cron otherwise, or a
-- `schedule add` without --tz in another zone, wrote it).
ALTER TABLE schedules ADD COLUMN due_checked INTEGER NOT NULL DEFAULT 0;
