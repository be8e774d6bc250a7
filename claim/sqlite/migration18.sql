-- Version 18 of the queuectl schema: the spool files whose jobs are gone.
--
-- A spool file is taken into the ingester's own directory, its job
-- committed with the file's ingest key, and only then unlinked. An
-- ingester that dies between the commit and the unlink leaves the file
-- for the next one, which finds the key on the job's row and drops the
-- file as a duplicate. Once that job has run and been removed (rm, purge,
-- dlq purge), its row no longer says so: the key is kept here, so that
-- the file is a duplicate still, not a second run of the job. Kept 90
-- days from the job's removal.
CREATE TABLE gone_ingests (
    ingest_key TEXT    PRIMARY KEY,
    job_id     TEXT    NOT NULL,
    gone_at    INTEGER NOT NULL -- Unix seconds
) WITHOUT ROWID;
CREATE INDEX gone_ingests_at ON gone_ingests (gone_at);
-- Only a finished job is ever removed; the pending row of a refused
-- insert, taken back in its own transaction, is no job that ran.
CREATE TRIGGER ingests_gone AFTER DELETE ON jobs
WHEN old.ingest_key IS NOT NULL AND old.state IN ('completed', 'dead', 'canceled') BEGIN
    DELETE FROM gone_ingests WHERE gone_at < unixepoch() - 90 * 86400;
    INSERT OR IGNORE INTO gone_ingests (ingest_key, job_id, gone_at) VALUES (old.ingest_key, old.id, unixepoch());
END;
