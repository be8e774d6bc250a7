package serve_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// scrape fetches /metrics and parses it with Prometheus's own text parser.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, body := get(t, base+"/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// value returns the sample of family name whose labels are labels
// (name, value pairs); for a histogram, its count.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range fam.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no sample of %s with labels %v", name, labels)
	return 0
}

// TestMetrics: gauges agree with the store and the spool, and the run
// counters and histograms count the runs that ended after the server
// started, each once however often it is scraped.
func TestMetrics(t *testing.T) {
	h := newHome(t)
	ts := h.serve(t, serve.Options{})
	finished(t, h) // ok: 1 completed run; bad: 2 failed runs
	dirs := filepath.Join(h.dir, "spool")
	os.WriteFile(filepath.Join(dirs, "waiting.json"), []byte(`{"command": "true"}`), 0o600)
	os.WriteFile(filepath.Join(h.dir, "rejected", "bad.json"), []byte(`{`), 0o600)
	for range 2 { // a second scrape must not count the runs again
		fams := scrape(t, ts.URL)
		for _, tc := range []struct {
			name   string
			labels []string
			want   float64
		}{
			{"queuectl_jobs", []string{"state", "completed", "queue", "default"}, 1},
			{"queuectl_jobs", []string{"state", "dead", "queue", "default"}, 1},
			{"queuectl_jobs", []string{"state", "pending", "queue", "later"}, 1},
			{"queuectl_jobs", []string{"state", "pending", "queue", "default"}, 0},
			{"queuectl_runs_total", []string{"outcome", "completed"}, 1},
			{"queuectl_runs_total", []string{"outcome", "failed"}, 2},
			{"queuectl_runs_total", []string{"outcome", "lost"}, 0},
			{"queuectl_run_duration_seconds", []string{"outcome", "failed"}, 2},
			{"queuectl_claim_to_start_seconds", nil, 3},
			{"queuectl_workers", nil, 1},
			{"queuectl_slots", nil, 2},
			{"queuectl_busy_slots", nil, 0},
			{"queuectl_spool_waiting", nil, 1},
			{"queuectl_rejected", nil, 1},
		} {
			if got := value(t, fams, tc.name, tc.labels...); got != tc.want {
				t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
			}
		}
		// The job of queue later, which no worker serves, has waited since
		// it was enqueued; default has nothing due.
		if got := value(t, fams, "queuectl_queue_wait_seconds", "queue", "later"); got <= 0 {
			t.Errorf("queuectl_queue_wait_seconds{queue=later} = %v, want > 0", got)
		}
		if got := value(t, fams, "queuectl_queue_wait_seconds", "queue", "default"); got != 0 {
			t.Errorf("queuectl_queue_wait_seconds{queue=default} = %v, want 0", got)
		}
		if got := value(t, fams, "queuectl_queue_paused", "queue", "later"); got != 0 {
			t.Errorf("queuectl_queue_paused{queue=later} = %v before any pause, want 0", got)
		}
	}
	// A paused queue says so, beside its wait; so does every queue while
	// all are paused.
	ctx := context.Background()
	if err := h.store.Pause(ctx, "later"); err != nil {
		t.Fatal(err)
	}
	fams := scrapeUntil(t, ts.URL, "queuectl_queue_paused{queue=later} to be 1", func(fams map[string]*dto.MetricFamily) bool {
		return value(t, fams, "queuectl_queue_paused", "queue", "later") == 1
	})
	if got := value(t, fams, "queuectl_queue_paused", "queue", "default"); got != 0 {
		t.Errorf("queuectl_queue_paused{queue=default} = %v, want 0", got)
	}
	if err := h.store.Pause(ctx, claim.AllQueues); err != nil {
		t.Fatal(err)
	}
	scrapeUntil(t, ts.URL, "queuectl_queue_paused{queue=default} to be 1 with every queue paused", func(fams map[string]*dto.MetricFamily) bool {
		return value(t, fams, "queuectl_queue_paused", "queue", "default") == 1
	})
}

// scrapeUntil scrapes until ok holds of what it read, and returns that:
// a scrape answers from a read at most a second or two old (shared).
func scrapeUntil(t *testing.T, base, what string, ok func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		fams := scrape(t, base)
		if ok(fams) {
			return fams
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
