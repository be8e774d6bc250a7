package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/claim"
)

// finishManyQuery is finishQuery for the finishes of a group of two or
// more, in one statement (migration9.sql, queuectl_finish_many): the parameters of
// each are the elements of arrays, one element a finish, so a group of n
// finishes costs the server one statement, and one firing of the count
// triggers, rather than n. Each job moves as its FinishParams say, only
// while the run is the current one of the processing job, of its worker;
// its run is closed in the same statement; a job that completed marks its
// dependents' rows met and counts their waiting down; the listeners are
// woken when it commits. It returns each job moved, by its place in the
// arrays (from 1), with its new state; a finish whose run is no longer the
// current one of its job brings no row back (ErrLost: the run, ended by
// whoever recovered it, is left alone), and changes nothing.
//
// A lone finish keeps finishQuery, a prepared statement: the function
// costs more than it saves for one finish (BenchmarkCompleteAndClaim on
// PostgreSQL, one finish a group: 0.87–0.95 ms with finishQuery against
// 1.50–1.54 ms through the function; 8 slots, BenchmarkClaimers:
// 2,884–3,424 jobs/s against 2,219–2,840 with every finish through it).
// Both say what a finish does; TestGroupFinish and the conformance tests
// hold them to the same results.
const finishManyQuery = `SELECT finish, ended FROM queuectl_finish_many($1, $2, $3, $4, $5, $6, $7, $8, $9,
	$10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`

// finishArrays are the arrays of finishManyQuery, one element a finish.
type finishArrays struct {
	ids, workers, states, outcomes []string
	attempts, uncounts             []int32
	setExits, setErrors            []bool
	exitCodes                      []pgtype.Int4
	errors                         []pgtype.Text
	runAfters, finished, sizesOut  []pgtype.Int8
	sizesErr                       []pgtype.Int8
	nows                           []int64
	tailsOut, tailsErr             [][]byte
	pgids                          []pgtype.Int4
	execAts                        []pgtype.Int8
	confined                       []pgtype.Text
}

func (a *finishArrays) add(p claim.FinishParams) {
	now := p.Now.UnixNano()
	a.ids = append(a.ids, p.Run.JobID)
	a.attempts = append(a.attempts, int32(p.Run.Attempt))
	a.workers = append(a.workers, p.Run.WorkerID)
	a.states = append(a.states, string(p.State))
	uncount := int32(0)
	if p.Uncount {
		uncount = 1
	}
	a.uncounts = append(a.uncounts, uncount)
	a.setExits = append(a.setExits, p.SetExitCode)
	exit := pgtype.Int4{}
	if p.ExitCode != nil {
		exit = pgtype.Int4{Int32: int32(*p.ExitCode), Valid: true}
	}
	a.exitCodes = append(a.exitCodes, exit)
	a.setErrors = append(a.setErrors, p.SetError)
	a.errors = append(a.errors, pgtype.Text{String: p.Error, Valid: p.Error != ""})
	a.runAfters = append(a.runAfters, pgtype.Int8{Int64: p.RunAfter.UnixNano(), Valid: !p.RunAfter.IsZero()})
	a.nows = append(a.nows, now)
	a.finished = append(a.finished, pgtype.Int8{Int64: now, Valid: p.Finished})
	a.outcomes = append(a.outcomes, p.Outcome)
	var sizeOut, sizeErr pgtype.Int8
	var tailOut, tailErr []byte
	if ts := p.Run.Tails; ts != nil {
		sizeOut, sizeErr = pgtype.Int8{Int64: ts.Stdout.Size, Valid: true}, pgtype.Int8{Int64: ts.Stderr.Size, Valid: true}
		tailOut, tailErr = nonEmpty(ts.Stdout.Data), nonEmpty(ts.Stderr.Data)
	}
	a.sizesOut, a.sizesErr = append(a.sizesOut, sizeOut), append(a.sizesErr, sizeErr)
	a.tailsOut, a.tailsErr = append(a.tailsOut, tailOut), append(a.tailsErr, tailErr)
	r := p.Run
	a.pgids = append(a.pgids, pgtype.Int4{Int32: int32(r.PGID), Valid: r.PGID > 0})
	a.execAts = append(a.execAts, pgtype.Int8{Int64: r.ExecAt.UnixNano(), Valid: !r.ExecAt.IsZero()})
	a.confined = append(a.confined, pgtype.Text{String: r.Confined, Valid: r.Confined != ""})
}

// nonEmpty is b, or nil (NULL) when it is empty, as TailColumns has it.
func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// queueFinishMany queues the finishes of reqs in b, one statement.
func (e *Engine) queueFinishMany(b *pgx.Batch, reqs []*request) {
	var a finishArrays
	for _, req := range reqs {
		a.add(*req.finish)
	}
	b.Queue(finishManyQuery, a.ids, a.attempts, a.workers, a.states, a.uncounts, a.setExits, a.exitCodes,
		a.setErrors, a.errors, a.runAfters, a.nows, a.finished, a.outcomes, a.sizesOut, a.sizesErr,
		a.tailsOut, a.tailsErr, a.pgids, a.execAts, a.confined, e.channel)
}

// readFinishMany sets each request's ended state from the result of
// queueFinishMany, or ErrLost for those whose job is no longer their
// run's.
func readFinishMany(br pgx.BatchResults, reqs []*request) error {
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("finish jobs: %w", err)
	}
	defer rows.Close()
	moved := make([]bool, len(reqs))
	for rows.Next() {
		var i int64
		var state string
		if err := rows.Scan(&i, &state); err != nil {
			return fmt.Errorf("finish jobs: %w", err)
		}
		if i < 1 || int(i) > len(reqs) || moved[i-1] {
			return fmt.Errorf("finish jobs: unexpected row for finish %d of %d", i, len(reqs))
		}
		moved[i-1] = true
		reqs[i-1].ended = claim.State(state)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("finish jobs: %w", err)
	}
	for i, req := range reqs {
		if !moved[i] {
			p := req.finish
			req.finishErr = fmt.Errorf("finish job %s attempt %d: %w", p.Run.JobID, p.Run.Attempt, claim.ErrLost)
		}
	}
	return nil
}
