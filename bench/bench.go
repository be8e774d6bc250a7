// Package bench is the `queuectl bench` harness: each scenario measured on
// this machine and held against a limit measured in the same run.
package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// Suite measures queuectl on the machine it runs on, each scenario held
// against a limit: either the same work done by a bare loop, measured in
// the same run (so that a busy or slow machine moves both), or a fixed
// target. Scenarios that a user runs as separate commands run the queuectl
// binary (Exe) as separate processes, on scratch homes under Dir.
type Suite struct {
	Exe     string // the queuectl binary
	Dir     string // scratch directory; Suite makes one home per scenario in it
	Jobs    int    // jobs and spool files for throughput and ingestion (default 10,000)
	Slots   int    // worker slots for throughput (default 4)
	Scale   int    // queued jobs of the large store in the scale scenario (default 1,000,000)
	Samples int    // latency samples per door (default 200)
	// Only names the scenario groups to run (throughput, ingest, latency,
	// scale, footprint); empty runs them all.
	Only []string
	// DB, when set, names a database server (postgres://…): each scenario's
	// store is then a scratch database made on it and dropped at the end
	// (claim.Scratch), and every process runs with QUEUECTL_DB set to it,
	// instead of a SQLite file in the scenario's home.
	DB string
	// Log receives progress lines; may be nil.
	Log func(format string, args ...any)

	run   string            // this run's directory in Dir
	dbs   map[string]string // a home's store, when not its queue.db
	drops []func(context.Context) error
}

// Groups are the scenario groups, in the order Run runs them.
var Groups = []string{"throughput", "ingest", "latency", "scale", "footprint"}

// Result is one line of the bench table.
type Result struct {
	Scenario string
	Rate     float64 // per second, for rate scenarios; else 0
	P50, P99 float64 // in Unit; 0 when not measured
	Unit     string  // of P50 and P99: "ms" or "MB"
	Limit    string  // what the result is held against
	Ratio    float64 // the result over the limit
	Target   string  // what Ratio must be, such as "≥ 0.80"
	Met      bool
}

// Run runs the scenarios in order and returns their results. It stops at
// the first error, returning the results so far. The scratch homes stay in
// a new directory in Dir; every process Run starts has ended when it
// returns. The machine should be otherwise idle: the scenarios and their
// limits share its CPUs.
func (b *Suite) Run(ctx context.Context) ([]Result, error) {
	b.defaults()
	runs := map[string]func(context.Context) ([]Result, error){
		"throughput": b.throughput, "ingest": b.ingest, "latency": b.latency,
		"scale": b.scale, "footprint": b.footprint,
	}
	for _, g := range b.Only {
		if !slices.Contains(Groups, g) {
			return nil, fmt.Errorf("%w: no bench scenario %q (want one of %s)", claim.ErrInvalid, g, strings.Join(Groups, ", "))
		}
	}
	if b.DB != "" {
		if err := claim.CanScratch(b.DB); err != nil {
			return nil, err
		}
	}
	// A new directory for every run: deleting an earlier run's homes just
	// before would make this one's file creation slower on some file
	// systems (ext4 without a journal scans recently deleted inodes).
	var err error
	if b.run, err = os.MkdirTemp(b.Dir, "run-"); err != nil {
		return nil, fmt.Errorf("create bench directory: %w", err)
	}
	b.logf("bench: %d CPUs, %s, scratch homes in %s", runtime.NumCPU(), runtime.Version(), b.run)
	if b.DB != "" {
		b.logf("bench: each scenario's store is a scratch database on %s, dropped at the end", claim.RedactLocation(b.DB))
	}
	defer b.dropScratch(ctx)
	var out []Result
	for _, g := range Groups {
		if len(b.Only) > 0 && !slices.Contains(b.Only, g) {
			continue
		}
		b.logf("bench: %s", g)
		rs, err := runs[g](ctx)
		out = append(out, rs...)
		if err != nil {
			return out, fmt.Errorf("bench %s: %w", g, err)
		}
	}
	return out, nil
}

func (b *Suite) defaults() {
	if b.Jobs <= 0 {
		b.Jobs = 10000
	}
	if b.Slots <= 0 {
		b.Slots = 4
	}
	if b.Scale <= 0 {
		b.Scale = 1000000
	}
	if b.Samples <= 0 {
		b.Samples = 200
	}
}

// perSecond is n over d, per second.
func perSecond(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

// atLeast is a rate result that must reach min times limit.
func atLeast(scenario string, rate, limit float64, limitText string, min float64) Result {
	r := Result{Scenario: scenario, Rate: rate, Limit: limitText, Ratio: rate / limit,
		Target: fmt.Sprintf("≥ %.2f", min)}
	r.Met = r.Ratio >= min
	return r
}

func (b *Suite) logf(format string, args ...any) {
	if b.Log != nil {
		b.Log(format, args...)
	}
}

// atMost is a result whose p50 must stay within maxP50 and whose p99
// within maxP99 (0: p99 not held to a limit). Ratio is the worse of the two.
func atMost(scenario string, p50, p99 float64, unit string, maxP50, maxP99 float64) Result {
	r := Result{Scenario: scenario, P50: p50, P99: p99, Unit: unit, Ratio: p50 / maxP50,
		Limit: fmt.Sprintf("p50 %g %s", maxP50, unit), Target: "≤ 1.00"}
	if maxP99 > 0 {
		r.Ratio = max(r.Ratio, p99/maxP99)
		r.Limit += fmt.Sprintf(", p99 %g %s", maxP99, unit)
	}
	r.Met = r.Ratio <= 1
	return r
}

// quantile is the q-quantile (nearest rank) of xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// home makes a fresh scratch home for a scenario in this run's directory,
// with a scratch database of its own when the suite runs on a server.
func (b *Suite) home(ctx context.Context, name string) (string, error) {
	home := filepath.Join(b.run, name)
	if err := os.Mkdir(home, 0o700); err != nil {
		return "", fmt.Errorf("create scratch home: %w", err)
	}
	if b.DB == "" {
		return home, nil
	}
	db, drop, err := claim.Scratch(ctx, b.DB)
	if err != nil {
		return "", err
	}
	b.drops = append(b.drops, drop)
	b.share(home, db)
	b.logf("bench: %s: store %s", name, claim.RedactLocation(db))
	return home, nil
}

// share makes home's store db, as a second host's home shares the first's.
func (b *Suite) share(home, db string) {
	if b.dbs == nil {
		b.dbs = map[string]string{}
	}
	b.dbs[home] = db
}

// store is where home's store is: its scratch database, else its queue.db.
func (b *Suite) store(home string) string {
	if db, ok := b.dbs[home]; ok {
		return db
	}
	return filepath.Join(home, "queue.db")
}

// open opens the store of a scratch home.
func (b *Suite) open(home string) (*claim.Store, error) {
	return claim.Open(b.store(home))
}

// dropScratch drops the scratch databases of the run, once every scenario
// has closed its stores and its processes have ended.
func (b *Suite) dropScratch(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	for _, drop := range b.drops {
		if err := drop(ctx); err != nil {
			b.logf("bench: %v", err)
		}
	}
	b.drops = nil
}

// fill enqueues n jobs running command into home's store, in batches of
// one transaction each, as `enqueue -` does with JSON lines.
func (b *Suite) fill(ctx context.Context, home string, n int, command string) error {
	s, err := b.open(home)
	if err != nil {
		return err
	}
	defer s.Close()
	const batchSize = 10000
	batch := make([]claim.NewJob, 0, batchSize)
	for i := 0; i < n; i += len(batch) {
		batch = batch[:min(batchSize, n-i)]
		for k := range batch {
			batch[k] = claim.NewJob{Command: command}
		}
		if _, err := s.EnqueueAll(ctx, batch); err != nil {
			return err
		}
		if n > 100000 && (i+len(batch))%100000 == 0 {
			b.logf("bench: %d of %d jobs queued", i+len(batch), n)
		}
	}
	return nil
}

// expect checks that n jobs of home are in state st.
func (b *Suite) expect(ctx context.Context, home string, st claim.State, n int) error {
	s, err := b.open(home)
	if err != nil {
		return err
	}
	defer s.Close()
	counts, err := s.Counts(ctx)
	if err != nil {
		return err
	}
	if counts[st] != n {
		return fmt.Errorf("%d jobs %s, want %d (%v)", counts[st], st, n, counts)
	}
	return nil
}

// start starts the queuectl binary on home and returns it with the time
// it was started. Its stdout is discarded and its stderr appended to
// home/bench.log, as a worker's would go to a file.
func (b *Suite) start(ctx context.Context, home string, args ...string) (*exec.Cmd, time.Time, error) {
	cmd, log, err := b.command(ctx, home, args...)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer log.Close() // the child has its own descriptor once started
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, began, fmt.Errorf("start queuectl: %w", err)
	}
	return cmd, began, nil
}

// command prepares the queuectl binary on home, as start runs it; the
// caller closes log once the command has started.
func (b *Suite) command(ctx context.Context, home string, args ...string) (cmd *exec.Cmd, log *os.File, err error) {
	log, err = os.OpenFile(filepath.Join(home, "bench.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open bench log: %w", err)
	}
	cmd = exec.CommandContext(ctx, b.Exe, append([]string{"--home", home}, args...)...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "QUEUECTL_HOME=") || strings.HasPrefix(kv, "QUEUECTL_DB_PATH=") ||
			strings.HasPrefix(kv, "QUEUECTL_DB=")
	}), "NO_COLOR=1")
	if db, ok := b.dbs[home]; ok {
		// In the environment rather than --db, where ps would show its password.
		cmd.Env = append(cmd.Env, "QUEUECTL_DB="+db)
	}
	cmd.Stderr = log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	return cmd, log, nil
}

// timeRun runs the queuectl binary on home to its end and returns how long
// it took from start to exit.
func (b *Suite) timeRun(ctx context.Context, home string, args ...string) (time.Duration, error) {
	cmd, began, err := b.start(ctx, home, args...)
	if err != nil {
		return 0, err
	}
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("queuectl %s: %w (see %s)", strings.Join(args, " "), err, filepath.Join(home, "bench.log"))
	}
	return time.Since(began), nil
}
