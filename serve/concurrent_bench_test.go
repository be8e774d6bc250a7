package serve_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// concurrentJobs is the store the concurrent benchmark reads: a busy
// home's week, not the million of BenchmarkServeMillion.
const concurrentJobs = 100_000

// BenchmarkServeConcurrent is 200 clients polling one server, each once a
// second, going round the overview, /metrics and two API reads, as a wall
// of dashboards, scripts and a Prometheus would. It reports the median and
// 99th percentile latency of each, and how many requests failed (a 503 is
// a read that waited past its deadline behind the others). b.N is the
// number of requests in all: 2000x is ten seconds of polling.
//
//	go test ./serve -run '^$' -bench ServeConcurrent -benchtime 2000x
func BenchmarkServeConcurrent(b *testing.B) {
	dir := bigHome(b, concurrentJobs)
	s, err := claim.Open(filepath.Join(dir, "queue.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	srv, err := serve.New(serve.Options{Store: s, Home: dir, Lease: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	const clients, every = 200, time.Second
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	paths := []struct{ name, path string }{
		{"overview", "/"},
		{"metrics", "/metrics"},
		{"api-status", "/api/v1/status"},
		{"api-jobs", "/api/v1/jobs?limit=50&newest=1"},
	}
	var (
		mu     sync.Mutex
		took   = map[string][]time.Duration{}
		failed int
		wg     sync.WaitGroup
	)
	for _, p := range paths { // a server that has been up a while, not a cold one
		resp, err := client.Get(ts.URL + p.path)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	rounds := max(1, b.N/clients)
	b.ResetTimer()
	for c := range clients {
		wg.Go(func() {
			// Spread the clients over the interval, as independent pollers are.
			next := time.Now().Add(every * time.Duration(c) / clients)
			for i := range rounds {
				time.Sleep(time.Until(next))
				next = next.Add(every)
				p := paths[(c+i)%len(paths)]
				req, _ := http.NewRequest(http.MethodGet, ts.URL+p.path, nil)
				req.Header.Set("Accept", "text/html")
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				d := time.Since(start)
				mu.Lock()
				took[p.name] = append(took[p.name], d)
				if resp.StatusCode != http.StatusOK {
					failed++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	for _, p := range paths {
		d := took[p.name]
		if len(d) == 0 {
			continue
		}
		slices.Sort(d)
		b.ReportMetric(ms(d[len(d)/2]), p.name+"-p50-ms")
		b.ReportMetric(ms(d[min(len(d)-1, len(d)*99/100)]), p.name+"-p99-ms")
	}
	b.ReportMetric(float64(failed), "failed")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
