-- Version 9 of the queuectl schema on PostgreSQL: queuectl_finish_many
-- (migration8.sql) also records each run's start where its finish carries
-- it (its process group, when its command started, what held it), so that
-- a short run's start is kept with its end, in one write instead of two
-- (claim.Run.StartColumns). A NULL leaves what is recorded. The function of
-- version 8 stays, for the workers of an older binary that call it.
CREATE FUNCTION queuectl_finish_many(text[], integer[], text[], text[], integer[], boolean[],
    integer[], boolean[], text[], bigint[], bigint[], bigint[], text[], bigint[], bigint[], bytea[], bytea[],
    integer[], bigint[], text[], text)
RETURNS TABLE (finish bigint, ended text)
LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
BEGIN
    RETURN QUERY
    WITH f AS (
        SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::integer[], $6::boolean[],
            $7::integer[], $8::boolean[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[],
            $14::bigint[], $15::bigint[], $16::bytea[], $17::bytea[], $18::integer[], $19::bigint[], $20::text[])
        WITH ORDINALITY AS f(id, attempt, worker_id, state, uncount, set_exit, exit_code, set_error, error,
            run_after, now, finished, outcome, stdout_size, stderr_size, stdout_tail, stderr_tail,
            pgid, exec_at, confined, i)),
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
            stdout_size = f.stdout_size, stderr_size = f.stderr_size, stdout_tail = f.stdout_tail, stderr_tail = f.stderr_tail,
            pgid = coalesce(f.pgid, runs.pgid), exec_at = coalesce(f.exec_at, runs.exec_at),
            confined = coalesce(f.confined, runs.confined)
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
    SELECT job.i, job.state FROM job, pg_notify($21, '') AS wake;
END
$fn$;
