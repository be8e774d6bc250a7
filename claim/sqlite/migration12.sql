-- Version 12 of the queuectl schema: holding, labelling and editing jobs.

-- A free-form label given at enqueue (`list --label L` reads its index).
ALTER TABLE jobs ADD COLUMN label TEXT;
CREATE INDEX jobs_label ON jobs (label, seq) WHERE label IS NOT NULL;

-- `hold` moves a pending or failed job to 'held', which the claim never
-- takes, and keeps here the state `release` puts it back to.
ALTER TABLE jobs ADD COLUMN held_from TEXT;

-- A held job is live: it keeps its unique_key.
DROP INDEX jobs_unique_key;
CREATE UNIQUE INDEX jobs_unique_key ON jobs (unique_key)
    WHERE unique_key IS NOT NULL AND state IN ('pending', 'processing', 'failed', 'held');

-- `edit` may move a job that has not started to another queue: its count
-- moves with it.
DROP TRIGGER queue_counts_update;
CREATE TRIGGER queue_counts_update AFTER UPDATE OF state, queue ON jobs
WHEN old.state IS NOT new.state OR old.queue IS NOT new.queue BEGIN
    UPDATE queue_counts SET n = n - 1 WHERE queue = old.queue AND state = old.state;
    INSERT OR IGNORE INTO queue_counts (queue, state, n) VALUES (new.queue, new.state, 0);
    UPDATE queue_counts SET n = n + 1 WHERE queue = new.queue AND state = new.state;
END;
