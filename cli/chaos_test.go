package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/testenv"
)

var (
	chaosLong   = flag.Bool("chaos.long", false, "chaos test: 1000 rounds instead of 60")
	chaosRounds = flag.Int("chaos.rounds", 0, "chaos test: rounds to run (default 60, or 1000 with -chaos.long)")
	chaosSeed   = flag.Uint64("chaos.seed", 0, "chaos test: random seed (default: from the clock; logged)")
)

// TestChaos SIGKILLs workers and ingesters at random instants, round after
// round, while jobs arrive through `enqueue` and spool files, are canceled
// (pending or running, by `cancel` processes that may be killed too) and
// the queue is paused and resumed, then checks
// SPEC §6: every accepted job completed (or dead by its own failures), none
// stuck, each spool file exactly one job, a job run twice only when a kill
// cut a run (counted), dead/ agreeing with the database, no run of a job
// overlapping another, and a sound database. A job whose cancel succeeded
// ends canceled with no process left in its runs' groups; one whose cancel
// found it finished, or that no cancel touched, ends as it would have.
//
//	go test -run TestChaos -chaos.long -timeout 2h -v .
func TestChaos(t *testing.T) { testChaos(t, newHome(t)) }

// TestChaosPostgres is TestChaos with the store in PostgreSQL.
func TestChaosPostgres(t *testing.T) { testChaos(t, newPostgresHome(t)) }

func testChaos(t *testing.T, h *qhome) {
	needTools(t, "flock")
	rounds := 60
	if *chaosLong {
		rounds = 1000
	}
	if *chaosRounds > 0 {
		rounds = *chaosRounds
	}
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("chaos: %d rounds, seed %d (-chaos.seed=%d repeats the schedule)", rounds, seed, seed)
	c := newChaos(t, h, seed)
	began := time.Now()
	for r := 0; r < rounds; r++ {
		c.round()
	}
	c.settle()
	c.verify()
	t.Logf("chaos: %s in %v", c.figures(rounds), time.Since(began).Round(time.Second))
}

// chaos is one chaos run: the processes it keeps alive and kills, and every
// job it asked for.
type chaos struct {
	t          *testing.T
	h          *qhome
	rng        *rand.Rand
	out, locks string
	actors     []*actor
	inFlight   []*oneShot // enqueue and ingest processes not yet ended
	started    []*proc    // every process, to read its stderr at the end
	jobs       map[string]*chaosJob
	kills      map[string]int
	killedPIDs map[int]bool // workers killed: the only ones whose runs may be lost
	next       int
	dropped    int      // spool files
	bad        []string // tokens of spool files that must be rejected
	enqueued   int      // jobs in enqueue processes that exited 0
	uncertain  int      // jobs in enqueue processes that were killed
	stats      chaosStats
}

// actor is a long-running process that the chaos kills and restarts.
type actor struct {
	role string
	args []string
	p    *proc
}

// oneShot is a process that ends on its own unless killed.
type oneShot struct {
	role   string
	p      *proc
	tokens []string // the jobs it enqueues (or cancels)
}

// chaosJob is a job the test asked for. Its token is in its command, so
// that a job is found also when its spool file had no id.
type chaosJob struct {
	token string
	spool bool
	fails bool // exits 3 every run: dead by its own failures
	// accepted: its spool file was dropped, or its enqueue exited 0.
	// Otherwise its enqueue was killed, and it may or may not exist.
	accepted bool
	// canceled: a `cancel` of it exited 0, so it must end canceled;
	// mayCancel: one was killed, or exited 0 (it may end canceled).
	canceled, mayCancel bool
	batch               []string // the tokens enqueued with it (all or none exist)
}

type chaosStats struct {
	jobs, completed, deadOwn, deadLost    int
	canceled, cancelsLate, pauses         int
	runs, lostRuns, reRuns, dupCompletion int
	killedEnqueueStored, orphanReasons    int
}

const chaosFailRetries = 2

func newChaos(t *testing.T, h *qhome, seed uint64) *chaos {
	dir := t.TempDir()
	c := &chaos{t: t, h: h, rng: rand.New(rand.NewPCG(seed, seed>>1|1)),
		out: filepath.Join(dir, "out"), locks: filepath.Join(dir, "locks"),
		jobs: map[string]*chaosJob{}, kills: map[string]int{}, killedPIDs: map[int]bool{}}
	if err := os.Mkdir(c.locks, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"heartbeat-interval", "200ms"}, {"poll-interval", "100ms"}, {"spool-rescan", "200ms"}} {
		c.h.must("config", "set", kv[0], kv[1])
	}
	for _, a := range []actor{
		{role: "worker", args: []string{"worker", "start", "--count", "3", "--no-spool"}},
		{role: "worker", args: []string{"worker", "start", "--count", "3", "--no-spool"}},
		{role: "worker+spool", args: []string{"worker", "start", "--count", "3"}},
		{role: "watch", args: []string{"watch"}},
	} {
		a := a
		c.actors = append(c.actors, &a)
		c.launch(&a)
	}
	return c
}

func (c *chaos) launch(a *actor) {
	a.p = c.h.start(a.args...)
	c.started = append(c.started, a.p)
}

// command is a job's shell command. flock -n proves that no two runs of one
// job overlap: a second run that finds the lock held says so in out.
func (c *chaos) command(j *chaosJob) string {
	body := fmt.Sprintf(`echo "s %s $QUEUECTL_ATTEMPT" >> %s; sleep 0.%d; echo "d %s" >> %s`,
		j.token, c.out, c.rng.IntN(4), j.token, c.out)
	if j.fails {
		body = fmt.Sprintf(`echo "f %s" >> %s; exit 3`, j.token, c.out)
	}
	return fmt.Sprintf(`: %s; flock -n %s/%s sh -c '%s' || { s=$?; [ $s = 3 ] || echo "overlap %s" >> %s; exit $s; }`,
		j.token, c.locks, j.token, body, j.token, c.out)
}

func (c *chaos) newJob(prefix string, spool bool) *chaosJob {
	c.next++
	j := &chaosJob{token: fmt.Sprintf("%s%05d", prefix, c.next), spool: spool, fails: c.rng.IntN(10) == 0}
	c.jobs[j.token] = j
	return j
}

func (c *chaos) spec(j *chaosJob, withID bool) map[string]any {
	s := map[string]any{"command": c.command(j)}
	if withID {
		s["id"] = j.token
	}
	if j.fails {
		s["max_retries"], s["backoff_base"] = chaosFailRetries, 1
	}
	return s
}

// round: jobs arrive by spool and enqueue, and at a random instant one or
// two random processes are SIGKILLed and restarted.
func (c *chaos) round() {
	for n := c.rng.IntN(5); n > 0; n-- {
		c.drop()
	}
	c.enqueue()
	if c.rng.IntN(8) == 0 {
		c.dropBad()
	}
	if c.rng.IntN(3) == 0 {
		c.oneShot("ingest", nil, "", "ingest")
	}
	if c.rng.IntN(2) == 0 {
		c.cancelOne()
	}
	c.pauseOrResume()
	c.randomInstant(time.Second)
	c.killOne()
	if c.rng.IntN(4) == 0 {
		c.killOne()
	}
	c.checkActors()
	c.reapOneShots(false)
}

// randomInstant lets the processes run for a random while: the kill lands
// wherever they are. It waits for nothing in particular.
func (c *chaos) randomInstant(upTo time.Duration) {
	time.Sleep(time.Duration(c.rng.Int64N(int64(upTo))))
}

// drop writes a spool file: mostly as x.json.tmp renamed to x.json, else
// in place in two writes, as cp does (the ingesters must wait for it).
func (c *chaos) drop() {
	j := c.newJob("s", true)
	j.accepted = true
	c.dropped++
	data, err := json.Marshal(c.spec(j, c.rng.IntN(2) == 0))
	if err != nil {
		c.t.Fatal(err)
	}
	path := filepath.Join(c.h.dir, "spool", j.token+".json")
	if c.rng.IntN(10) < 7 {
		if err := os.WriteFile(path+".tmp", data, 0o600); err != nil {
			c.t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			c.t.Fatal(err)
		}
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	half := len(data) / 2
	_, err1 := f.Write(data[:half])
	_, err2 := f.Write(data[half:])
	if err := errors.Join(err1, err2, f.Close()); err != nil {
		c.t.Fatal(err)
	}
}

// dropBad drops a spool file that can never become a job: it must end up
// in rejected/, once, with its reason, whatever is killed meanwhile.
func (c *chaos) dropBad() {
	c.next++
	tok := fmt.Sprintf("b%05d", c.next)
	c.bad = append(c.bad, tok)
	path := filepath.Join(c.h.dir, "spool", tok+".json")
	if err := os.WriteFile(path+".tmp", []byte(`{"command": ": `+tok+`", "retries": 1}`), 0o600); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		c.t.Fatal(err)
	}
}

// enqueue starts one `enqueue`: a single --command job, or a batch on stdin
// (one transaction: all or none).
func (c *chaos) enqueue() {
	n := 1 + c.rng.IntN(8)
	var batch []string
	var stdin strings.Builder
	for range n {
		j := c.newJob("e", false)
		batch = append(batch, j.token)
		line, _ := json.Marshal(c.spec(j, true))
		stdin.Write(append(line, '\n'))
	}
	for _, tok := range batch {
		c.jobs[tok].batch = batch
	}
	if n == 1 {
		j := c.jobs[batch[0]]
		args := []string{"enqueue", "--id", j.token, "--command", c.command(j)}
		if j.fails {
			args = append(args, "--max-retries", fmt.Sprint(chaosFailRetries), "--backoff-base", "1")
		}
		c.oneShot("enqueue", batch, "", args...)
		return
	}
	c.oneShot("enqueue", batch, stdin.String(), "enqueue", "-q", "-")
}

// cancelOne starts a `cancel` of a recent job enqueued with its id: it may
// be pending, running, finished, or not stored yet; half the time it waits
// for a running job's processes to stop. The cancel may be killed too.
func (c *chaos) cancelOne() {
	var ids []string
	for tok := range c.jobs {
		if strings.HasPrefix(tok, "e") {
			ids = append(ids, tok)
		}
	}
	if len(ids) == 0 {
		return
	}
	sort.Strings(ids)
	ids = ids[max(0, len(ids)-8):] // the newest: likely pending or running
	tok := ids[c.rng.IntN(len(ids))]
	args := []string{"cancel", tok}
	if c.rng.IntN(2) == 0 {
		args = []string{"cancel", "--no-wait", tok}
	}
	c.jobs[tok].mayCancel = true
	c.oneShot("cancel", []string{tok}, "", args...)
}

// pauseOrResume pauses the default queue (where every chaos job is) now and
// then, and resumes it a round or so later.
func (c *chaos) pauseOrResume() {
	switch c.rng.IntN(6) {
	case 0:
		c.stats.pauses++
		c.oneShot("pause", nil, "", "pause", "--queue", "default")
	case 1, 2:
		c.oneShot("resume", nil, "", "resume")
	}
}

func (c *chaos) oneShot(role string, tokens []string, stdin string, args ...string) {
	p := c.h.startInput(stdin, args...)
	c.inFlight = append(c.inFlight, &oneShot{role: role, p: p, tokens: tokens})
	c.started = append(c.started, p)
}

// killOne SIGKILLs a random worker, watcher or one-shot still running, and
// restarts it if it is an actor.
func (c *chaos) killOne() {
	var live []*oneShot
	for _, o := range c.inFlight {
		if !ended(o.p) {
			live = append(live, o)
		}
	}
	i := c.rng.IntN(len(c.actors) + len(live))
	if i >= len(c.actors) {
		o := live[i-len(c.actors)]
		o.p.cmd.Process.Signal(syscall.SIGKILL)
		<-o.p.done
		if killed(o.p) {
			c.kills[o.role]++
		}
		return
	}
	a := c.actors[i]
	a.p.cmd.Process.Signal(syscall.SIGKILL)
	<-a.p.done
	if !killed(a.p) {
		c.t.Errorf("%s had ended before it was killed: %v\n%s", a.role, a.p.err, a.p.stderr)
	}
	c.kills[a.role]++
	c.killedPIDs[a.p.cmd.Process.Pid] = true
	c.launch(a)
}

// killed reports whether an ended process died of SIGKILL.
func killed(p *proc) bool {
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// checkActors fails the test for a worker or watcher that ended by itself.
func (c *chaos) checkActors() {
	for _, a := range c.actors {
		if ended(a.p) {
			c.t.Fatalf("%s %v ended without being killed: %v\n%s", a.role, a.args, a.p.err, a.p.stderr)
		}
	}
}

// reapOneShots settles the enqueues and ingests that have ended (with all,
// waits for every one): exit 0 accepts an enqueue's jobs; a kill leaves
// them uncertain; any other end is a failure.
func (c *chaos) reapOneShots(all bool) {
	var still []*oneShot
	for _, o := range c.inFlight {
		if all {
			o.p.exit(c.t, runLimit)
		}
		if !ended(o.p) {
			still = append(still, o)
			continue
		}
		code := 0
		var ee *exec.ExitError
		if errors.As(o.p.err, &ee) {
			code = ee.ExitCode()
		}
		switch {
		case o.role == "cancel" && killed(o.p):
		case o.role == "cancel" && code == exitOK:
			c.jobs[o.tokens[0]].canceled = true
		case o.role == "cancel" && code == exitConflict:
			c.stats.cancelsLate++ // it was completed or dead already
		case o.role == "cancel" && code == exitNotFound:
			// its enqueue had not committed yet (or never will)
		case (o.role == "pause" || o.role == "resume") && (killed(o.p) || o.p.err == nil):
		case killed(o.p):
			c.uncertain += len(o.tokens)
		case o.p.err != nil:
			c.t.Errorf("queuectl %v: %v\n%s", o.p.cmd.Args[1:], o.p.err, o.p.stderr)
		case o.role == "cancel" || o.role == "pause" || o.role == "resume":
		default:
			c.enqueued += len(o.tokens)
			for _, tok := range o.tokens {
				c.jobs[tok].accepted = true
			}
		}
	}
	c.inFlight = still
}

// settle lets the survivors finish every job and ingest every file, then
// stops them gracefully.
func (c *chaos) settle() {
	c.reapOneShots(true)
	c.h.must("resume")
	c.checkActors()
	quiet := 0
	waitFor(c.t, 3*time.Minute, "every job finished and the spool empty", func() bool {
		st := c.h.queueStatus()
		if st.Pending+st.Processing+st.Failed == 0 && st.SpoolWaiting == 0 {
			quiet++
		} else {
			quiet = 0
		}
		return quiet >= 3 // files move spool → .ingesting → job: seen at rest three times
	})
	c.h.must("worker", "stop", "--wait", "--timeout", "1m")
	for _, a := range c.actors {
		if a.role == "watch" {
			a.p.signal(c.t, syscall.SIGTERM)
		}
		if code := a.p.exit(c.t, time.Minute); code != 0 {
			c.t.Errorf("%s exited %d after a graceful stop\n%s", a.role, code, a.p.stderr)
		}
	}
}

// verify checks the guarantees against the database, out, dead/, the spool
// and every process's stderr.
func (c *chaos) verify() {
	t := c.t
	if c.h.db == "" {
		checkIntegrity(t, c.h.location())
	}
	s, err := claim.Open(c.h.location())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	all, err := s.List(ctx, claim.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	marks := c.marks()
	byToken := map[string]claim.Job{}
	for _, j := range all {
		tok := tokenOf(j.Command)
		cj := c.jobs[tok]
		if cj == nil {
			t.Errorf("job %s (%q) was never asked for", j.ID, j.Command)
			continue
		}
		if prev, ok := byToken[tok]; ok {
			t.Errorf("%s became two jobs: %s and %s", tok, prev.ID, j.ID)
		}
		byToken[tok] = j
		runs, err := s.Runs(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		c.checkJob(cj, j, runs, marks[tok])
	}
	for tok, cj := range c.jobs {
		_, stored := byToken[tok]
		switch {
		case cj.accepted && !stored:
			t.Errorf("accepted job %s (spool file: %v) was lost", tok, cj.spool)
		case !cj.accepted:
			for _, other := range cj.batch {
				if _, ok := byToken[other]; ok != stored {
					t.Errorf("killed enqueue stored %s (%v) but not %s (%v): a batch is all or nothing", tok, stored, other, ok)
				}
			}
			if stored {
				c.stats.killedEnqueueStored++
			}
		}
	}
	for tok, m := range marks {
		if m.overlap > 0 {
			j := byToken[tok]
			runs, _ := s.Runs(ctx, j.ID)
			var desc []string
			for _, r := range runs {
				desc = append(desc, fmt.Sprintf("run %d %s worker pid %d pgid %d %s..%s", r.Attempt, r.Outcome, r.PID, r.PGID, r.StartedAt.Format("05.000"), r.EndedAt.Format("05.000")))
			}
			data, _ := os.ReadFile(c.out)
			for _, l := range strings.Split(string(data), "\n") {
				if strings.Contains(l, tok) {
					desc = append(desc, "OUT "+l)
				}
			}
			for _, p := range c.started {
				for _, l := range strings.Split(p.stderr.String(), "\n") {
					if strings.Contains(l, j.ID) {
						desc = append(desc, fmt.Sprintf("STDERR %d: %s", p.cmd.Process.Pid, l))
					}
				}
			}
			t.Errorf("job %s: a run started while another run of it still held its lock (%d times); runs: %s",
				j.ID, m.overlap, strings.Join(desc, "; "))
		}
	}
	c.checkDeadDir(all)
	c.checkSpoolEmpty()
	for _, p := range c.started {
		for _, bad := range []string{"database is locked", "SQLITE_BUSY", "panic:", "DATA RACE", "fatal error"} {
			if strings.Contains(p.stderr.String(), bad) {
				t.Errorf("queuectl %v said %q:\n%s", p.cmd.Args[1:], bad, p.stderr)
			}
		}
	}
}

// checkJob checks one job's end state and runs against what its command
// wrote.
func (c *chaos) checkJob(cj *chaosJob, j claim.Job, runs []claim.Run, m mark) {
	t := c.t
	c.stats.jobs++
	c.stats.runs += len(runs)
	lost := 0
	for _, r := range runs {
		switch {
		case r.EndedAt.IsZero():
			t.Errorf("job %s run %d never ended", j.ID, r.Attempt)
		case r.Outcome == claim.OutcomeLost:
			lost++
			if !c.killedPIDs[r.PID] {
				t.Errorf("job %s run %d lost, but its worker (pid %d) was never killed", j.ID, r.Attempt, r.PID)
			}
		case r.Outcome == claim.OutcomeInterrupted:
			t.Errorf("job %s run %d interrupted, but nothing stopped a worker hard", j.ID, r.Attempt)
		}
	}
	c.stats.lostRuns += lost
	if m.started > 1 {
		c.stats.reRuns += m.started - 1
	}
	switch {
	case cj.canceled && j.State != claim.Canceled:
		t.Errorf("job %s: its cancel exited 0, but it is %s", j.ID, j.State)
	case j.State == claim.Canceled:
		c.stats.canceled++
		if !cj.mayCancel {
			t.Errorf("job %s is canceled, but no cancel of it ran", j.ID)
		}
		for _, r := range runs {
			if r.PGID > 0 && groupAlive(r.PGID) {
				t.Errorf("canceled job %s: process group %d of run %d is still alive", j.ID, r.PGID, r.Attempt)
			}
		}
	case j.State == claim.Dead && j.LastError == fmt.Sprintf("worker lost %d times", claim.MaxLost):
		c.stats.deadLost++
		if lost < claim.MaxLost {
			t.Errorf("job %s dead as lost %d times, but only %d runs were lost", j.ID, claim.MaxLost, lost)
		}
	case cj.fails:
		c.stats.deadOwn++
		if j.State != claim.Dead || j.LastError != "exit status 3" || j.Attempts != chaosFailRetries {
			t.Errorf("failing job %s: state %s, attempts %d, last error %q; want dead after %d runs with exit status 3",
				j.ID, j.State, j.Attempts, j.LastError, chaosFailRetries)
		}
		if extra := m.failed - chaosFailRetries; extra > lost {
			t.Errorf("failing job %s ran %d times but only %d runs were cut by a kill", j.ID, m.failed, lost)
		}
	default:
		c.stats.completed++
		if j.State != claim.Completed {
			t.Errorf("job %s: state %s (last error %q), want completed", j.ID, j.State, j.LastError)
		}
		if m.done == 0 && j.State == claim.Completed {
			t.Errorf("job %s completed, but its command never finished", j.ID)
		}
		if extra := m.done - 1; extra > 0 {
			c.stats.dupCompletion += extra
			if extra > lost {
				t.Errorf("job %s finished %d times, but only %d of its runs were cut by a kill", j.ID, m.done, lost)
			}
		}
	}
}

// mark counts the lines one job's runs wrote to out.
type mark struct{ started, done, failed, overlap int }

func (c *chaos) marks() map[string]mark {
	out := map[string]mark{}
	data, err := os.ReadFile(c.out)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			c.t.Errorf("out: torn line %q", l)
			continue
		}
		m := out[f[1]]
		switch f[0] {
		case "s":
			m.started++
		case "d":
			m.done++
		case "f":
			m.failed++
		case "overlap":
			m.overlap++
		}
		out[f[1]] = m
	}
	return out
}

// tokenOf reads the token at the start of a chaos job's command, ": TOKEN; …".
func tokenOf(command string) string {
	f := strings.Fields(command)
	if len(f) < 2 || f[0] != ":" {
		return ""
	}
	return strings.TrimSuffix(f[1], ";")
}

// checkDeadDir checks that dead/ holds exactly one file per dead job.
func (c *chaos) checkDeadDir(all []claim.Job) {
	want := map[string]bool{}
	for _, j := range all {
		if j.State == claim.Dead {
			want[j.ID+".json"] = true
		}
	}
	entries, err := os.ReadDir(filepath.Join(c.h.dir, "dead"))
	if err != nil {
		c.t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".tmp") {
			continue // a writer killed mid-write; removed by the next SyncDead after a minute
		}
		if !want[e.Name()] {
			c.t.Errorf("dead/%s: no dead job of that id", e.Name())
		}
		delete(want, e.Name())
	}
	for name := range want {
		c.t.Errorf("dead/%s missing for a dead job", name)
	}
}

// checkSpoolEmpty checks that every spool file was taken, no taken file was
// left behind, and rejected/ holds each bad file once, with its reason, and
// nothing else.
func (c *chaos) checkSpoolEmpty() {
	var left []string
	filepath.WalkDir(filepath.Join(c.h.dir, "spool"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, path)
		}
		return nil
	})
	if len(left) > 0 {
		c.t.Errorf("files left in spool/: %v", left)
	}
	dir := filepath.Join(c.h.dir, "rejected")
	entries, err := os.ReadDir(dir)
	if err != nil {
		c.t.Fatal(err)
	}
	rejected := map[string]int{}
	for _, e := range entries {
		name := e.Name()
		if base, ok := strings.CutSuffix(name, ".reason"); ok {
			if _, err := os.Lstat(filepath.Join(dir, base)); err != nil {
				c.stats.orphanReasons++ // a kill between writing the reason and the move
			}
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			c.t.Fatal(err)
		}
		tok := strings.TrimRight(tokenOf(strings.TrimPrefix(string(data), `{"command": "`)), `",`)
		rejected[tok]++
		if _, err := os.Stat(filepath.Join(dir, name+".reason")); err != nil {
			c.t.Errorf("rejected/%s has no reason: %v", name, err)
		}
	}
	for _, tok := range c.bad {
		if rejected[tok] != 1 {
			c.t.Errorf("bad spool file %s is in rejected/ %d times, want once", tok, rejected[tok])
		}
		delete(rejected, tok)
	}
	for tok, n := range rejected {
		c.t.Errorf("rejected/ holds %d files of %q, which was never bad", n, tok)
	}
}

func (c *chaos) figures(rounds int) string {
	kills, roles := 0, []string{}
	for role, n := range c.kills {
		kills += n
		roles = append(roles, fmt.Sprintf("%s %d", role, n))
	}
	sort.Strings(roles)
	s := c.stats
	return fmt.Sprintf("rounds %d; kills %d (%s); jobs %d (spool files %d, enqueued %d, from killed enqueues %d of %d); "+
		"completed %d, dead by own failures %d, dead as lost %d times %d; lost 0; runs %d, cut by a kill %d, re-runs %d, duplicate completions %d; "+
		"bad spool files %d, each rejected once (reasons orphaned by a kill: %d); "+
		"canceled %d (cancels that found the job finished %d), pauses %d",
		rounds, kills, strings.Join(roles, ", "), s.jobs, c.dropped, c.enqueued, s.killedEnqueueStored, c.uncertain,
		s.completed, s.deadOwn, claim.MaxLost, s.deadLost, s.runs, s.lostRuns, s.reRuns, s.dupCompletion, len(c.bad), s.orphanReasons,
		s.canceled, s.cancelsLate, s.pauses)
}

// queueStatus is `status --json`, the part the tests read.
type queueStatus struct {
	Pending, Processing, Completed, Failed, Dead, Total int
	SpoolWaiting                                        int `json:"spool_waiting"`
	Rejected                                            int
}

func (h *qhome) queueStatus() queueStatus {
	h.t.Helper()
	var st queueStatus
	if err := json.Unmarshal([]byte(h.must("status", "--json")), &st); err != nil {
		h.t.Fatalf("status --json: %v", err)
	}
	return st
}

// checkIntegrity runs SQLite's own consistency check on a database file.
// (Test-only SQL: it reads nothing of the schema.)
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		t.Fatalf("integrity_check %s: %v", path, err)
	}
	if res != "ok" {
		t.Errorf("integrity_check %s: %s", path, res)
	}
}

// A killed process keeps its files and locks until it has exited, and a
// big process takes a while to exit. The reaper must wait for the group of
// a lost run to be gone before the job can run again: a job that guards
// itself with flock -n, as cron jobs do, must find its lock free.
func TestLostRunIsGoneBeforeItRunsAgain(t *testing.T) {
	needTools(t, "flock", "awk")
	h := newHome(t)
	dir := t.TempDir()
	out, ready, hog := filepath.Join(dir, "out"), filepath.Join(dir, "ready"), filepath.Join(dir, "hog.awk")
	// The first run grows to a few hundred MB, which takes the kernel some
	// milliseconds to tear down after SIGKILL, and waits.
	err := os.WriteFile(hog, []byte(`BEGIN { s = "x"; while (length(s) < 200000000) s = s s; system("touch " ready "; sleep 60") }`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	h.must("enqueue", "--id", "guarded", "--command", fmt.Sprintf(
		`flock -n %s/lock sh -c 'echo "start $QUEUECTL_ATTEMPT" >> %s; [ "$QUEUECTL_ATTEMPT" = 1 ] || exit 0
		exec awk -v ready=%s -f %s' || echo "overlap $QUEUECTL_ATTEMPT" >> %s`, dir, out, ready, hog, out))
	w := h.start("worker", "start", "--no-spool")
	waitFor(t, time.Minute, "the first run to grow", func() bool {
		_, err := os.Stat(ready)
		return err == nil
	})
	h.start("worker", "start", "--no-spool") // recovers the run at once, and runs it again
	w.signal(t, syscall.SIGKILL)
	w.exit(t, 10*time.Second)
	h.must("wait", "--timeout", "1m", "guarded")
	if got := lines(t, out); len(got) != 2 || got["start 1"] != 1 || got["start 2"] != 1 {
		t.Errorf("out has %v, want start 1 and start 2 only: the second run found the first one's lock held", got)
	}
}

// needTools skips the test when a command it runs in its jobs is missing
// (fails it under CI=true).
func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		testenv.LookPath(t, name, "util-linux, awk")
	}
}
