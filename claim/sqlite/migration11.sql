-- Version 11 of the queuectl schema: jobs_runnable goes.
--
-- Since version 10 the claim, HasWork and NextRunAfter read
-- jobs_queue_runnable (INDEXED BY), and no other statement reads
-- jobs_runnable; it was still written by every claim, every enqueue and
-- every job that failed and waits for its retry: a page more for each.
DROP INDEX jobs_runnable;
