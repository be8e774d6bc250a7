package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/queuectl/queuectl/claim"
)

// The durable writes of a worker's slots (Claim, CompleteAndClaim,
// Finish) are group-committed: a call that finds maxInFlight groups'
// transactions in flight waits for one to end, and the calls that gathered
// meanwhile go together in the next one, one round trip and one WAL flush
// for all of them. The claims of one claimant (a worker's slots share
// theirs) are one statement, claimManyQuery, that takes up to as many jobs
// as there are claims; its finishes are one statement too,
// finishManyQuery. Two in flight, not one: the
// server executes one group while it flushes the other (measured: one in
// flight gained nothing over a transaction per call, whose flushes the
// server already shares; two doubled the rate; four was below two).
//
// A group goes beside one in flight only when it is at least as big: a
// transaction costs the server about the same for one call as for eight,
// so a lone call sent beside a group of seven wasted one. Sent as soon as
// there was room, 8 busy slots made groups of one and of five to seven in
// turn, 2.7 calls a group; waiting until a second group is as big, or
// until the first ends, gained a fifth in BenchmarkClaimers (DECISIONS.md,
// "A second group as big as the first"). The wait is bounded (maxHold):
// the group in flight may be held in the server, by a row another
// transaction locks, and the other slots' writes must not wait for it.
//
// Every crash rule holds as before: a call returns only after the
// transaction holding its write committed durably, or with the error that
// says nothing of it was recorded (the whole group rolls back together).
// The finishes' NOTIFYs are folded by the server into one per transaction
// and channel (identical notifications of one transaction are delivered
// once).

// maxGroup bounds the calls of one transaction.
const maxGroup = 64

// maxInFlight is how many groups may be in flight at once: one executes
// while the other waits for its flush.
const maxInFlight = 2

// maxHold is how long the calls queued beside a group in flight wait to be
// as many as it holds before they go anyway: many times a group's usual
// time in flight (about 2 ms on a local server), and short beside a group
// that a lock holds in the server. A variable for tests.
var maxHold = 20 * time.Millisecond

// codeDeadlock is deadlock_detected: finishes of one group count down the
// waiting of shared dependents in an order no statement fixes, so two
// groups can deadlock; the server rolls one back, which is then retried.
const codeDeadlock = "40P01"

// request is one call's part of a group: what it writes and, once done,
// what came of it.
type request struct {
	ctx    context.Context
	finish *claim.FinishParams // nil: no run ends
	claim  *claim.ClaimParams  // nil: no claim

	j         claim.Job
	r         claim.Run
	claimErr  error // ErrNoJob, or the group's error
	ended     claim.State
	finishErr error     // ErrLost, or the group's error
	queued    time.Time // when it joined the queue
	done      bool      // set under the committer's mu once the results are set
}

// committer gathers requests into groups, maxInFlight transactions in
// flight at most. A caller that finds room sends the requests queued when
// nothing is in flight, when they are at least as many as the group in
// flight holds, or when the first of them has waited maxHold; otherwise
// they wait for more requests, for the group to end or for the hold's
// timer.
type committer struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*request
	sending int         // groups in flight
	sent    int         // requests in them
	hold    *time.Timer // wakes the queue when its first has waited maxHold

	groups atomic.Int64 // transactions sent, for tests
	widest atomic.Int64 // the most requests in one of them, for tests
}

// commit waits until req was sent in a group and its results are set.
func (e *Engine) commit(req *request) {
	g := &e.group
	g.mu.Lock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	req.queued = time.Now()
	g.queue = append(g.queue, req)
	for !req.done {
		if g.sending == maxInFlight || len(g.queue) == 0 { // full, or req is in flight
			g.cond.Wait()
			continue
		}
		if g.sending > 0 && len(g.queue) < g.sent && g.holds() { // too small to go beside the one in flight
			g.cond.Wait()
			continue
		}
		n := min(len(g.queue), maxGroup)
		group := slices.Clone(g.queue[:n])
		g.queue = slices.Delete(g.queue, 0, n)
		g.sending++
		g.sent += n
		g.mu.Unlock()
		e.sendGroup(group)
		g.mu.Lock()
		for _, sent := range group {
			sent.done = true // under mu: the waiters read it
		}
		g.sending--
		g.sent -= n
		g.cond.Broadcast()
	}
	g.mu.Unlock()
}

// holds reports whether the queue's first request has waited less than
// maxHold, and then sees that the queue is woken when it has.
func (g *committer) holds() bool {
	left := maxHold - time.Since(g.queue[0].queued)
	if left <= 0 {
		return false
	}
	if g.hold == nil {
		g.hold = time.AfterFunc(left, func() {
			g.mu.Lock()
			g.hold = nil
			g.cond.Broadcast()
			g.mu.Unlock()
		})
	}
	return true
}

// sendGroup commits group in one durable transaction, retrying it when the
// server rolled it back to break a deadlock, and sets each request's
// results.
func (e *Engine) sendGroup(group []*request) {
	live := group[:0:0]
	for _, req := range group {
		if err := req.ctx.Err(); err != nil {
			req.claimErr, req.finishErr = err, err
			continue
		}
		live = append(live, req)
	}
	if len(live) == 0 {
		return
	}
	ctx, stop := groupContext(live)
	defer stop()
	e.group.groups.Add(1)
	if n := int64(len(live)); n > e.group.widest.Load() {
		e.group.widest.Store(n)
	}
	var err error
	for range 3 {
		if err = e.sendOnce(ctx, live); !isDeadlock(err) {
			break
		}
	}
	if err != nil {
		for _, req := range live {
			req.claimErr, req.finishErr = err, err
		}
	}
}

// groupContext is a context that ends when every request's context has
// ended: one caller giving up does not fail the others' writes.
func groupContext(reqs []*request) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(reqs[0].ctx))
	left := atomic.Int64{}
	left.Store(int64(len(reqs)))
	stops := make([]func() bool, len(reqs))
	for i, req := range reqs {
		stops[i] = context.AfterFunc(req.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

func isDeadlock(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == codeDeadlock
}

// claimGroup is the claims of one claimant in a group: one statement.
type claimGroup struct {
	p    claim.ClaimParams // the first claim's, with the earliest Now
	reqs []*request
}

// genericPlans starts a group's transaction (genericPlansLocked one that
// claims): its statements run with the plans the server keeps for them
// (TestClaimPlan and TestFinishPlan check those), not replanned for each
// execution's values, which the server otherwise chooses for the claim and
// the finish: planning was 8% of the server's CPU, and GetCachedPlan 11%,
// under BenchmarkClaimers (DECISIONS.md, "A worker's statements keep their
// plans"). Like syncOff, it holds until the transaction ends, so the
// connection's other statements are planned as before.
const genericPlans = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"

// genericPlansLocked is genericPlans and claimLock in one statement, which
// starts a group that claims: a statement fewer for each such group.
const genericPlansLocked = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), (" + claimLock + ")"

// sendOnce sends the group's statements in one implicit transaction:
// genericPlans (genericPlansLocked when anything claims), the finishes (one
// statement: a lone finish is finishQuery, several are finishManyQuery),
// then one claim statement per claimant (the finishes first, so that the
// jobs they free are claimable, as in CompleteAndClaim).
func (e *Engine) sendOnce(ctx context.Context, reqs []*request) error {
	var finishes []*request
	var claims []*claimGroup
	for _, req := range reqs {
		req.j, req.r, req.claimErr, req.ended, req.finishErr = claim.Job{}, claim.Run{}, nil, "", nil
		if req.finish != nil {
			finishes = append(finishes, req)
		}
		if req.claim != nil {
			claims = addClaim(claims, req)
		}
	}
	b := &pgx.Batch{}
	if len(claims) > 0 {
		b.Queue(genericPlansLocked, e.claimKey)
	} else {
		b.Queue(genericPlans)
	}
	if len(finishes) == 1 {
		e.queueFinish(b, *finishes[0].finish)
	} else if len(finishes) > 1 {
		e.queueFinishMany(b, finishes)
	}
	for _, c := range claims {
		queueClaimMany(b, c.p, len(c.reqs))
	}
	return e.send(ctx, b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return batchStart("start the group", err)
		}
		if len(finishes) == 1 {
			req := finishes[0]
			if req.ended, req.finishErr = readFinish(br, *req.finish); req.finishErr != nil && !errors.Is(req.finishErr, claim.ErrLost) {
				return req.finishErr
			}
		} else if len(finishes) > 1 {
			if err := readFinishMany(br, finishes); err != nil {
				return err
			}
		}
		for _, c := range claims {
			if err := readClaimMany(br, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// addClaim adds req's claim to the group of its claimant in claims.
func addClaim(claims []*claimGroup, req *request) []*claimGroup {
	p := *req.claim
	for _, c := range claims {
		if sameClaimant(c.p.Claimant, p.Claimant) {
			if p.Now.Before(c.p.Now) {
				c.p.Now = p.Now
			}
			c.reqs = append(c.reqs, req)
			return claims
		}
	}
	return append(claims, &claimGroup{p: p, reqs: []*request{req}})
}

func sameClaimant(a, b claim.Claimant) bool {
	return a.WorkerID == b.WorkerID && a.Host == b.Host && a.PID == b.PID && a.Lease == b.Lease &&
		a.LogDir == b.LogDir && slices.Equal(a.Queues, b.Queues)
}

// readClaimMany hands the jobs of c's statement to its requests, in
// order; those left get ErrNoJob.
func readClaimMany(br pgx.BatchResults, c *claimGroup) error {
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("claim jobs: %w", err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		j, err := claim.ScanJob(rows)
		if err != nil {
			return fmt.Errorf("claim jobs: %w", err)
		}
		if i == len(c.reqs) {
			return fmt.Errorf("claim jobs: more than the %d asked for", len(c.reqs))
		}
		req := c.reqs[i]
		req.j, req.r = j, claim.NewRun(req.claim.Claimant, j, c.p.Now)
		i++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("claim jobs: %w", err)
	}
	for _, req := range c.reqs[i:] {
		req.claimErr = claim.ErrNoJob
	}
	return nil
}

// claimManyQuery is claimQuery taking up to $7 jobs: from each runnable
// queue, as many of its first jobs it can lock as the queue has room for
// (its limit less its processing jobs, or $7), then the best $7 of those.
const claimManyQuery = `WITH next AS (
	SELECT h.seq FROM (` + queueRooms + unpausedQueues + roomsEnd + roomHeads + `),` + claimTake

// claimManyQueuesQuery is claimManyQuery for the queues $8 only.
const claimManyQueuesQuery = `WITH next AS (
	SELECT h.seq FROM (` + queueRooms + unpausedQueues + ` AND queue = ANY($8)` + roomsEnd + roomHeads + `),` + claimTake

// queueRooms, unpausedQueues and roomsEnd select the unpaused queues with
// pending or failed jobs, each with the room it has: its limit less its
// processing jobs, or $7 when it has none.
const queueRooms = `SELECT r.queue, coalesce((SELECT l.max_running - (SELECT coalesce(sum(c.n), 0) FROM queue_counts c
		WHERE c.queue = l.queue AND c.state = 'processing')
		FROM queue_limits l WHERE l.queue = r.queue AND l.max_running > 0), $7::bigint)::bigint AS room
	FROM (`

const roomsEnd = `
		GROUP BY queue HAVING sum(n) > 0) r) q`

// roomHeads ends claimManyQuery's pick: each queue's first jobs it can
// lock, up to its room, then the best $7 of them.
const roomHeads = `
	CROSS JOIN LATERAL (
		SELECT seq, priority, run_after FROM jobs
		WHERE jobs.queue = q.queue AND state IN ('pending', 'failed') AND waiting = 0 AND run_after <= $1
		ORDER BY priority DESC, run_after, seq
		LIMIT greatest(least(q.room, $7::bigint), 0)
		FOR UPDATE SKIP LOCKED) h
	ORDER BY h.priority DESC, h.run_after, h.seq
	LIMIT $7::bigint`

// queueClaimMany queues the claim of up to n jobs for p in b; one is
// claimQuery itself.
func queueClaimMany(b *pgx.Batch, p claim.ClaimParams, n int) {
	if n == 1 {
		queueClaim(b, p)
		return
	}
	now := p.Now.UnixNano()
	args := []any{now, p.WorkerID, now + int64(p.Lease), p.Host, p.PID, logPrefix(p.LogDir), n}
	if len(p.Queues) > 0 {
		b.Queue(claimManyQueuesQuery, append(args, p.Queues)...)
		return
	}
	b.Queue(claimManyQuery, args...)
}
