-- Version 5 of the queuectl schema on PostgreSQL: holding, labelling and
-- editing jobs, as SQLite's migration12.sql.

ALTER TABLE jobs ADD COLUMN label text;
CREATE INDEX jobs_label ON jobs (label, seq) WHERE label IS NOT NULL;

ALTER TABLE jobs ADD COLUMN held_from text;

DROP INDEX jobs_unique_key;
CREATE UNIQUE INDEX jobs_unique_key ON jobs (unique_key)
    WHERE unique_key IS NOT NULL AND state IN ('pending', 'processing', 'failed', 'held');

DROP TRIGGER queue_counts_update ON jobs;
CREATE TRIGGER queue_counts_update AFTER UPDATE OF state, queue ON jobs
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.queue IS DISTINCT FROM NEW.queue)
    EXECUTE FUNCTION queuectl_count_change();
