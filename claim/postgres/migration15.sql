-- Version 15 of the queuectl schema on PostgreSQL: the spool files whose
-- jobs are gone.
--
-- A spool file is taken into the ingester's own directory, its job
-- committed with the file's ingest key, and only then unlinked. An
-- ingester that dies between the commit and the unlink leaves the file
-- for the next one on its host, which finds the key on the job's row and
-- drops the file as a duplicate. Once that job has run (on any host) and
-- been removed (rm, purge, dlq purge), its row no longer says so: the key
-- is kept here, so that the file is a duplicate still, not a second run
-- of the job. Kept 90 days from the job's removal.
CREATE TABLE gone_ingests (
    ingest_key text   PRIMARY KEY,
    job_id     text   NOT NULL,
    gone_at    bigint NOT NULL -- Unix seconds
);
CREATE INDEX gone_ingests_at ON gone_ingests (gone_at);

-- Only a finished job is ever removed; the pending row of a refused
-- insert, taken back in its own transaction, is no job that ran.
CREATE FUNCTION queuectl_ingests_gone() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM gone_ingests WHERE gone_at < extract(epoch FROM now())::bigint - 90 * 86400;
    INSERT INTO gone_ingests (ingest_key, job_id, gone_at)
    SELECT ingest_key, id, extract(epoch FROM now())::bigint FROM old_jobs
    WHERE ingest_key IS NOT NULL AND state IN ('completed', 'dead', 'canceled')
    ON CONFLICT (ingest_key) DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER ingests_gone AFTER DELETE ON jobs
    REFERENCING OLD TABLE AS old_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION queuectl_ingests_gone();
