package serve

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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

	mu       sync.Mutex // one scrape at a time: it moves mark and snap
	mark     claim.RunMark
	snap     snapshot
	handler  http.Handler
	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	latency  prometheus.Histogram
}

// snapshot is what one scrape read for the gauges.
type snapshot struct {
	jobs                                    map[string]map[claim.State]int
	waiting, rejected, workers, slots, busy int
}

var (
	jobsDesc = prometheus.NewDesc("queuectl_jobs", "Jobs by state and queue.", []string{"state", "queue"}, nil)
	gauges   = []struct {
		desc *prometheus.Desc
		get  func(snapshot) int
	}{
		{prometheus.NewDesc("queuectl_spool_waiting", "Files in spool/ waiting to become jobs.", nil, nil), func(s snapshot) int { return s.waiting }},
		{prometheus.NewDesc("queuectl_rejected", "Files in rejected/.", nil, nil), func(s snapshot) int { return s.rejected }},
		{prometheus.NewDesc("queuectl_workers", "Live worker processes.", nil, nil), func(s snapshot) int { return s.workers }},
		{prometheus.NewDesc("queuectl_slots", "Job slots of the live workers.", nil, nil), func(s snapshot) int { return s.slots }},
		{prometheus.NewDesc("queuectl_busy_slots", "Slots running a job (jobs processing).", nil, nil), func(s snapshot) int { return s.busy }},
	}
)

// Buckets: runs take from milliseconds to hours; a claim turns into a
// running command in milliseconds unless the machine is struggling.
var (
	durationBuckets = []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14400}
	latencyBuckets  = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
)

func newMetrics(s *Server) *metrics {
	m := &metrics{
		s:    s,
		mark: claim.RunMark{EndedAt: s.now()},
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queuectl_runs_total", Help: "Runs ended since this server started, by outcome.",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "queuectl_run_duration_seconds", Help: "How long runs took, from claim to end, by outcome.",
			Buckets: durationBuckets,
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "queuectl_claim_to_start_seconds", Help: "From a run's claim to its command's start.",
			Buckets: latencyBuckets,
		}),
	}
	for _, o := range []string{claim.OutcomeCompleted, claim.OutcomeFailed, claim.OutcomeLost, claim.OutcomeInterrupted, claim.OutcomeCanceled} {
		m.runs.WithLabelValues(o) // every outcome shows, at 0 until it happens
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(gaugeCollector{m}, m.runs, m.duration, m.latency)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
	return m
}

// feedMax bounds the runs one scrape reads; a backlog (a server started
// on a busy queue long ago and not scraped since) is read over a few.
const feedMax = 50000

// ServeHTTP reads the store and the spool, then lets promhttp write the
// text format from what was read.
func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.feed(ctx); err != nil {
		m.s.failErr(w, r, err)
		return
	}
	if err := m.read(ctx); err != nil {
		m.s.failErr(w, r, err)
		return
	}
	m.handler.ServeHTTP(w, r)
}

// feed observes every run that ended since the last scrape.
func (m *metrics) feed(ctx context.Context) error {
	for read := 0; read < feedMax; {
		runs, err := m.s.store.EndedRuns(ctx, m.mark, 5000)
		if err != nil {
			return err
		}
		for _, r := range runs {
			m.runs.WithLabelValues(r.Outcome).Inc()
			m.duration.WithLabelValues(r.Outcome).Observe(r.EndedAt.Sub(r.StartedAt).Seconds())
			if !r.ExecAt.IsZero() {
				m.latency.Observe(r.ExecAt.Sub(r.StartedAt).Seconds())
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
	jobs, err := m.s.store.QueueCounts(ctx)
	if err != nil {
		return err
	}
	st, err := m.s.status(ctx)
	if err != nil {
		return err
	}
	slots := 0
	for _, w := range st.Workers {
		slots += w.Slots
	}
	m.snap = snapshot{jobs: jobs, waiting: st.SpoolWaiting, rejected: st.Rejected,
		workers: len(st.Workers), slots: slots, busy: st.Counts[claim.Processing]}
	return nil
}

// gaugeCollector hands the scrape's snapshot to the registry.
type gaugeCollector struct{ m *metrics }

func (c gaugeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	for _, g := range gauges {
		ch <- g.desc
	}
}

// Collect runs inside ServeHTTP, under m.mu.
func (c gaugeCollector) Collect(ch chan<- prometheus.Metric) {
	snap := c.m.snap
	for queue, counts := range snap.jobs {
		// Every state of a queue that has jobs, zeros too, so that a
		// state emptying shows as 0 rather than as a vanished series.
		for _, st := range claim.States {
			ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(counts[st]), string(st), queue)
		}
	}
	for _, g := range gauges {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, float64(g.get(snap)))
	}
}
