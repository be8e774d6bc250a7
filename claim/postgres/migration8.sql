-- Version 8 of the queuectl schema on PostgreSQL: the finishes of one
-- group-committed transaction (batch.go) in one statement, as a function,
-- queuectl_finish_many: its arguments are arrays, one element a finish
-- (finish.go), and it returns each job moved, by its place in them, with
-- its new state. It moves each job only while its run is the current one
-- of the processing job, of its worker, as the finish of one job does; a
-- finish that matches no row (lost) brings no row back, and the others are
-- unaffected. A dependent of several jobs completing together is counted
-- down once for each (met's rows grouped by job), not once for all.
--
-- A function, and planned without sequential scans (SET enable_seqscan),
-- because of the plan the server keeps: a statement's generic plan is made
-- from what it knew of the tables then, and made while they were nearly
-- empty (a worker's first finishes, without autovacuum), a join of jobs
-- with the finishes' arrays reads every job, in a table that only grows
-- (DECISIONS: "The finish named its run by a join"). The job's state is
-- tested as an expression (IS TRUE) that no index matches, so the plan
-- probes jobs by id rather than reading every processing job through
-- jobs_state.
CREATE FUNCTION queuectl_finish_many(text[], integer[], text[], text[], integer[], boolean[],
    integer[], boolean[], text[], bigint[], bigint[], bigint[], text[], bigint[], bigint[], bytea[], bytea[], text)
RETURNS TABLE (finish bigint, ended text)
LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
BEGIN
    RETURN QUERY
    WITH f AS (
        SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::integer[], $6::boolean[],
            $7::integer[], $8::boolean[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[],
            $14::bigint[], $15::bigint[], $16::bytea[], $17::bytea[])
        WITH ORDINALITY AS f(id, attempt, worker_id, state, uncount, set_exit, exit_code, set_error, error,
            run_after, now, finished, outcome, stdout_size, stderr_size, stdout_tail, stderr_tail, i)),
    job AS (
        UPDATE jobs SET state = CASE WHEN jobs.cancel_at IS NULL THEN f.state ELSE 'canceled' END,
            attempts = jobs.attempts - f.uncount,
            exit_code = CASE WHEN f.set_exit THEN f.exit_code ELSE jobs.exit_code END,
            last_error = CASE WHEN f.set_error THEN f.error ELSE jobs.last_error END,
            run_after = coalesce(f.run_after, jobs.run_after), worker_id = NULL, lease_until = NULL,
            updated_at = f.now, finished_at = CASE WHEN jobs.cancel_at IS NULL THEN f.finished ELSE f.now END
        FROM f
        WHERE jobs.id = ANY($1::text[]) AND jobs.id = f.id
            AND (jobs.state = 'processing') IS TRUE AND jobs.runs = f.attempt AND jobs.worker_id = f.worker_id
        RETURNING f.i, jobs.id, jobs.state),
    run AS (
        UPDATE runs SET ended_at = f.now, outcome = f.outcome, exit_code = f.exit_code, error = f.error,
            stdout_size = f.stdout_size, stderr_size = f.stderr_size, stdout_tail = f.stdout_tail, stderr_tail = f.stderr_tail
        FROM job JOIN f ON f.i = job.i
        WHERE runs.job_id = ANY($1::text[]) AND runs.job_id = f.id AND runs.attempt = f.attempt),
    met AS (
        UPDATE deps SET met = true FROM job
        WHERE job.state = 'completed' AND deps.after_id = job.id AND NOT deps.met
        RETURNING deps.job_id),
    counted AS (
        UPDATE jobs SET waiting = jobs.waiting - m.n
        FROM (SELECT job_id, count(*) AS n FROM met GROUP BY job_id) m
        WHERE jobs.id = ANY(ARRAY(SELECT job_id FROM met)) AND jobs.id = m.job_id)
    SELECT job.i, job.state FROM job, pg_notify($18, '') AS wake;
END
$fn$;
