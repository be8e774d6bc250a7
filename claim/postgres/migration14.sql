-- Version 14 of the queuectl schema on PostgreSQL: the spool file identity
-- is unique through a partial index, as unique_key is. Most jobs have
-- none, and every update that moves a job wrote its NULL into the full
-- index again: two index entries of each job's claim and finish.
ALTER TABLE jobs DROP CONSTRAINT jobs_ingest_key_key;
CREATE UNIQUE INDEX jobs_ingest_key ON jobs (ingest_key) WHERE ingest_key IS NOT NULL;
