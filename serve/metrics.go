package serve

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// metrics is /metrics. Gauges are read from the store at each scrape, from
// tables that stay a few rows long at any size (queue_counts, workers) and
// from the spool directories. Counters and histograms of runs are fed, at
// each scrape, with the runs that ended since the previous one (the
// runs_ended index), so they count from the start of this process, as
// Prometheus counters do; no scrape reads the whole history.
type metrics struct {
	s *Server

	// scrape is the text of the last scrape, which concurrent scrapes
	// share, one read of the store a second.
	scrape *shared[[]byte]

	mu       sync.Mutex // one read at a time: it moves mark and snap
	mark     claim.RunMark
	snap     snapshot
	runs     map[string]uint64     // by outcome
	duration map[string]*histogram // by outcome, once a run of it ended
	latency  *histogram
}

// snapshot is what one scrape read for the gauges.
type snapshot struct {
	jobs                                    map[string]map[claim.State]int
	dueSince                                map[string]time.Time
	paused                                  []string // claim.Store.Paused
	at                                      time.Time
	waiting, rejected, workers, slots, busy int
}

var gauges = []struct {
	name, help string
	get        func(snapshot) int
}{
	{"queuectl_spool_waiting", "Files in spool/ waiting to become jobs.", func(s snapshot) int { return s.waiting }},
	{"queuectl_rejected", "Files in rejected/.", func(s snapshot) int { return s.rejected }},
	{"queuectl_workers", "Live worker processes.", func(s snapshot) int { return s.workers }},
	{"queuectl_slots", "Job slots of the live workers.", func(s snapshot) int { return s.slots }},
	{"queuectl_busy_slots", "Slots of live workers running a job.", func(s snapshot) int { return s.busy }},
}

// Buckets: runs take from milliseconds to hours; a claim turns into a
// running command in milliseconds unless the machine is struggling.
var (
	durationBuckets = []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14400}
	latencyBuckets  = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
)

func newMetrics(s *Server) *metrics {
	m := &metrics{
		s:        s,
		mark:     claim.RunMark{EndedAt: s.now()},
		runs:     map[string]uint64{},
		duration: map[string]*histogram{},
		latency:  newHistogram(latencyBuckets),
	}
	m.scrape = newShared(s.now, m.collect)
	for _, o := range []string{claim.OutcomeCompleted, claim.OutcomeFailed, claim.OutcomeLost, claim.OutcomeInterrupted, claim.OutcomeCanceled} {
		m.runs[o] = 0 // every outcome shows, at 0 until it happens
	}
	return m
}

// feedMax bounds the runs one scrape reads; a backlog (a server started
// on a busy queue long ago and not scraped since) is read over a few.
const feedMax = 50000

// ServeHTTP writes the text format of the last second's read of the
// store and the spool (see shared).
func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := m.s.ctx(r)
	defer cancel()
	text, err := m.scrape.get(ctx)
	if err != nil {
		m.s.failErr(w, r, err)
		return
	}
	w.Header().Set("Content-Type", promTextType)
	w.Write(text)
}

// collect reads the store and the spool and returns the text format.
func (m *metrics) collect(ctx context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.feed(ctx); err != nil {
		return nil, err
	}
	if err := m.read(ctx); err != nil {
		return nil, err
	}
	var p promText
	m.write(&p)
	return p.Bytes(), nil
}

// feed observes every run that ended since the last scrape.
func (m *metrics) feed(ctx context.Context) error {
	for read := 0; read < feedMax; {
		runs, err := m.s.store.EndedRuns(ctx, m.mark, 5000)
		if err != nil {
			return err
		}
		for _, r := range runs {
			m.runs[r.Outcome]++
			h := m.duration[r.Outcome]
			if h == nil {
				h = newHistogram(durationBuckets)
				m.duration[r.Outcome] = h
			}
			h.observe(r.EndedAt.Sub(r.StartedAt).Seconds())
			if !r.ExecAt.IsZero() {
				m.latency.observe(r.ExecAt.Sub(r.StartedAt).Seconds())
			}
			m.mark = r.Mark()
		}
		if len(runs) < 5000 {
			return nil
		}
		read += len(runs)
	}
	return nil
}

func (m *metrics) read(ctx context.Context) error {
	st, err := m.s.status(ctx)
	if err != nil {
		return err
	}
	due, err := m.s.store.DueSince(ctx)
	if err != nil {
		return err
	}
	slots := 0
	for _, w := range st.Workers {
		slots += w.Slots
	}
	m.snap = snapshot{jobs: st.QueueCounts, dueSince: due, paused: st.Paused, at: m.s.now(), waiting: st.SpoolWaiting, rejected: st.Rejected,
		workers: len(st.Workers), slots: slots, busy: st.Busy}
	return nil
}

// write writes every family, under m.mu.
func (m *metrics) write(p *promText) {
	p.family("queuectl_jobs", "gauge", "Jobs by state and queue.")
	for _, queue := range slices.Sorted(maps.Keys(m.snap.jobs)) {
		// Every state of a queue that has jobs, zeros too, so that a
		// state emptying shows as 0 rather than as a vanished series.
		for _, st := range claim.States {
			p.sample("queuectl_jobs", float64(m.snap.jobs[queue][st]), "queue", queue, "state", string(st))
		}
	}
	p.family("queuectl_queue_wait_seconds", "gauge", "How long the job a worker would take next from the queue has been due (0: none is).")
	for _, queue := range slices.Sorted(maps.Keys(m.snap.jobs)) {
		wait := 0.0
		if due, ok := m.snap.dueSince[queue]; ok {
			wait = max(0, m.snap.at.Sub(due).Seconds())
		}
		p.sample("queuectl_queue_wait_seconds", wait, "queue", queue)
	}
	// Beside the wait, so that an alert on it can leave out a queue paused
	// on purpose (queuectl-alerts.yml).
	p.family("queuectl_queue_paused", "gauge", "1 while the queue is paused (queuectl pause), else 0.")
	all := slices.Contains(m.snap.paused, claim.AllQueues)
	for _, queue := range slices.Sorted(maps.Keys(m.snap.jobs)) {
		paused := 0.0
		if all || slices.Contains(m.snap.paused, queue) {
			paused = 1
		}
		p.sample("queuectl_queue_paused", paused, "queue", queue)
	}
	p.family("queuectl_runs_total", "counter", "Runs ended since this server started, by outcome.")
	for _, o := range slices.Sorted(maps.Keys(m.runs)) {
		p.sample("queuectl_runs_total", float64(m.runs[o]), "outcome", o)
	}
	p.family("queuectl_run_duration_seconds", "histogram", "How long runs took, from claim to end, by outcome.")
	for _, o := range slices.Sorted(maps.Keys(m.duration)) {
		p.histogram("queuectl_run_duration_seconds", m.duration[o], "outcome", o)
	}
	p.family("queuectl_claim_to_start_seconds", "histogram", "From a run's claim to its command's start.")
	p.histogram("queuectl_claim_to_start_seconds", m.latency)
	for _, g := range gauges {
		p.family(g.name, "gauge", g.help)
		p.sample(g.name, float64(g.get(m.snap)))
	}
}
