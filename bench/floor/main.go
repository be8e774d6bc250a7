// Command floor measures what a worker's design costs before queuectl's
// own machinery: Slots goroutines run Jobs `sh -c true` jobs from a SQLite
// queue (modernc.org/sqlite, WAL, synchronous=NORMAL as a worker's per-job
// writes), each completing its last job and claiming the next in one
// transaction, against a bare loop that runs the same shells with no store
// (as `queuectl bench` does). Each variant adds one part of what a
// queuectl worker does per job to the one before:
//
//	plain     claim and complete: one transaction a job
//	+runs     a run row inserted at the claim and ended at the completion
//	+started  a second light transaction after the fork (the process group)
//	+pipes    stdout and stderr through a pipe each, read by a goroutine each
//	+gate     the shell waits on fd 3 for "go", written after +started
//	+pgid     a process group of its own, and Pdeathsig
//
// and "store" is +runs with no process at all: the store's part alone,
// to hold against BenchmarkClaimers/sqlite (queuectl's claim and complete).
//
// Rounds interleave the variants and the bare loop; it prints the median of
// each and its ratio to the bare loop's. A module of its own, as
// bench/peers: it holds SQL of its own, which queuectl keeps in claim.
//
//	cd bench/floor && go run . -slots 2
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	_ "modernc.org/sqlite"
)

// parts says what a variant does beyond claim and complete.
type parts struct{ runs, started, pipes, gate, pgid, storeOnly bool }

var variants = []struct {
	name string
	parts
}{
	{"plain", parts{}},
	{"+runs", parts{runs: true}},
	{"+started", parts{runs: true, started: true}},
	{"+pipes", parts{runs: true, started: true, pipes: true}},
	{"+gate", parts{runs: true, started: true, pipes: true, gate: true}},
	{"+pgid", parts{runs: true, started: true, pipes: true, gate: true, pgid: true}},
	{"store", parts{runs: true, storeOnly: true}},
}

// gate is the worker's (run/exec.go): the job's command follows it.
const gate = `read -r QUEUECTL_GATE <&3 && [ "$QUEUECTL_GATE" = go ] || exit 125; exec 3<&-; unset QUEUECTL_GATE; `

func main() {
	jobs := flag.Int("jobs", 5000, "jobs a round")
	slots := flag.Int("slots", 2, "jobs at a time")
	rounds := flag.Int("rounds", 3, "rounds")
	flag.Parse()
	rates := map[string][]float64{}
	for r := range *rounds {
		bare, err := bareLoop(*jobs, *slots)
		check(err)
		rates["bare"] = append(rates["bare"], bare)
		for _, v := range variants {
			rate, err := drain(*jobs, *slots, v.parts)
			check(err)
			rates[v.name] = append(rates[v.name], rate)
			fmt.Fprintf(os.Stderr, "round %d  %-9s %6.0f jobs/s\n", r+1, v.name, rate)
		}
	}
	bare := median(rates["bare"])
	fmt.Printf("%d true jobs, %d at a time, median of %d rounds\n", *jobs, *slots, *rounds)
	fmt.Printf("%-9s %8.0f jobs/s\n", "bare", bare)
	for _, v := range variants {
		m := median(rates[v.name])
		fmt.Printf("%-9s %8.0f jobs/s  %.2f of bare\n", v.name, m, m/bare)
	}
}

// bareLoop runs n `sh -c true`, slots at a time, and returns jobs/s.
func bareLoop(n, slots int) (float64, error) {
	todo := make(chan struct{}, n)
	for range n {
		todo <- struct{}{}
	}
	close(todo)
	start := time.Now()
	errs := make(chan error, slots)
	var wg sync.WaitGroup
	for range slots {
		wg.Go(func() {
			for range todo {
				if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return float64(n) / time.Since(start).Seconds(), <-errs
}

// drain queues n jobs in a new store and runs them, slots at a time, with
// p's parts; it returns jobs/s from the first claim to the last completion.
func drain(n, slots int, p parts) (float64, error) {
	dir, err := os.MkdirTemp("", "queuectl-floor-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "queue.db")+
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one writer, as a worker's store
	for _, q := range []string{
		`CREATE TABLE jobs (seq INTEGER PRIMARY KEY, state TEXT NOT NULL, command TEXT NOT NULL)`,
		`CREATE INDEX jobs_state ON jobs (state, seq)`,
		`CREATE TABLE runs (seq INTEGER NOT NULL, attempt INTEGER NOT NULL, pgid INTEGER,
			started_at INTEGER, ended_at INTEGER, outcome TEXT, PRIMARY KEY (seq, attempt))`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ` + fmt.Sprint(n) + `)
			INSERT INTO jobs (state, command) SELECT 'pending', 'true' FROM n`,
	} {
		if _, err := db.Exec(q); err != nil {
			return 0, fmt.Errorf("%s: %w", q, err)
		}
	}
	s := &store{db: db}
	for _, q := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&s.claim, `UPDATE jobs SET state = 'processing' WHERE seq =
			(SELECT seq FROM jobs WHERE state = 'pending' ORDER BY seq LIMIT 1) RETURNING seq, command`},
		{&s.complete, `UPDATE jobs SET state = 'completed' WHERE seq = ?`},
		{&s.runStart, `INSERT INTO runs (seq, attempt, started_at) VALUES (?, 1, ?)`},
		{&s.runEnd, `UPDATE runs SET ended_at = ?, outcome = 'completed' WHERE seq = ? AND attempt = 1`},
		{&s.started, `UPDATE runs SET pgid = ? WHERE seq = ? AND attempt = 1`},
	} {
		if *q.st, err = db.Prepare(q.sql); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	errs := make(chan error, slots)
	var wg sync.WaitGroup
	for range slots {
		wg.Go(func() {
			if err := s.slot(p); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return float64(n) / time.Since(start).Seconds(), <-errs
}

type store struct {
	db                                         *sql.DB
	claim, complete, runStart, runEnd, started *sql.Stmt
}

// slot completes its last job and claims the next in one transaction, and
// runs it, until none is left.
func (s *store) slot(p parts) error {
	var done int64
	for {
		seq, cmd, err := s.next(done, p)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		if !p.storeOnly {
			if err := s.run(seq, cmd, p); err != nil {
				return err
			}
		}
		done = seq
	}
}

func (s *store) next(done int64, p parts) (seq int64, cmd string, err error) {
	tx, err := s.db.Begin()
	if err != nil {
		return 0, "", err
	}
	defer tx.Rollback()
	now := time.Now().UnixNano()
	if done != 0 {
		if _, err := tx.Stmt(s.complete).Exec(done); err != nil {
			return 0, "", err
		}
		if p.runs {
			if _, err := tx.Stmt(s.runEnd).Exec(now, done); err != nil {
				return 0, "", err
			}
		}
	}
	err = tx.Stmt(s.claim).QueryRow().Scan(&seq, &cmd)
	if err == nil && p.runs {
		_, err = tx.Stmt(s.runStart).Exec(seq, now)
	}
	if err != nil && err != sql.ErrNoRows {
		return 0, "", err
	}
	if cerr := tx.Commit(); cerr != nil {
		return 0, "", cerr
	}
	return seq, cmd, err
}

func (s *store) run(seq int64, cmd string, p parts) error {
	c := exec.Command("/bin/sh", "-c", cmd)
	if p.gate {
		c = exec.Command("/bin/sh", "-c", gate+cmd)
	}
	if p.pgid {
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	var theirs []*os.File // the child's ends, closed once it started
	var copies sync.WaitGroup
	if p.pipes {
		for _, stream := range []*io.Writer{&c.Stdout, &c.Stderr} {
			r, w, err := os.Pipe()
			if err != nil {
				return err
			}
			*stream = w
			theirs = append(theirs, w)
			copies.Go(func() {
				io.Copy(io.Discard, r)
				r.Close()
			})
		}
	}
	var open *os.File
	if p.gate {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		c.ExtraFiles, theirs, open = []*os.File{r}, append(theirs, r), w
	}
	err := c.Start()
	for _, f := range theirs {
		f.Close()
	}
	if err != nil {
		return err
	}
	if p.started {
		tx, err := s.db.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Stmt(s.started).Exec(c.Process.Pid, seq); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	if open != nil {
		open.Write([]byte("go\n"))
		open.Close()
	}
	err = c.Wait()
	copies.Wait()
	return err
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}
