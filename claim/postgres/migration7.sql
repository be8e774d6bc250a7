-- Version 7 of the queuectl schema on PostgreSQL: queue_counts kept by one
-- statement-level trigger a statement rather than one row-level trigger a
-- changed row. The row trigger upserted two count rows for each job a
-- statement moved (a claim of 8 jobs: 16 upserts, about a third of its
-- server time); these upsert each (queue, state) the statement changed
-- once, by the sum of its rows' changes.
--
-- A trigger with transition tables has one event and no column list, so
-- the update trigger sees every UPDATE of jobs: the rows of an update that
-- moves no job between states or queues cancel out (each old row counts
-- -1 and its new row +1 in the same (queue, state)), and nothing is
-- written. The count rows are upserted in (queue, state) order, so two
-- transactions writing the same rows (the folder's shard 0, a backend's
-- own shard) take them in the same order and never deadlock on them.
DROP TRIGGER queue_counts_update ON jobs;
DROP TRIGGER queue_counts_delete ON jobs;
DROP FUNCTION queuectl_count_change();

CREATE FUNCTION queuectl_count_updated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queue_counts (queue, state, shard, n)
    SELECT queue, state, pg_backend_pid(), sum(d) FROM (
        SELECT queue, state, -1 AS d FROM old_jobs
        UNION ALL
        SELECT queue, state, 1 FROM new_jobs) c
    GROUP BY queue, state HAVING sum(d) <> 0
    ORDER BY queue, state
    ON CONFLICT (queue, state, shard) DO UPDATE SET n = queue_counts.n + excluded.n;
    RETURN NULL;
END
$$;

CREATE FUNCTION queuectl_count_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queue_counts (queue, state, shard, n)
    SELECT queue, state, pg_backend_pid(), -count(*) FROM old_jobs
    GROUP BY queue, state
    ORDER BY queue, state
    ON CONFLICT (queue, state, shard) DO UPDATE SET n = queue_counts.n + excluded.n;
    RETURN NULL;
END
$$;

CREATE TRIGGER queue_counts_update AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION queuectl_count_updated();

CREATE TRIGGER queue_counts_delete AFTER DELETE ON jobs
    REFERENCING OLD TABLE AS old_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION queuectl_count_deleted();
