package serve_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
	"github.com/queuectl/queuectl/spool"
)

// benchJobs is the size of the store the page and scrape benchmarks read.
const benchJobs = 1_000_000

// bigHome returns a home with n jobs: 5% pending, 5% dead, 5%
// failed, the rest completed, over 5 queues, each finished job with one
// run, the runs ending over the last 24 hours (a twenty-fourth of them in
// the last hour). It is built once (a minute or two) in $QUEUECTL_BENCH_DIR, else
// the temporary directory, and reused by later runs.
//
// The jobs are enqueued through claim; their states and runs are then set
// with two SQL statements (which the counting triggers follow), because a
// million real runs would take an hour.
func bigHome(b *testing.B, n int) string {
	b.Helper()
	root := os.Getenv("QUEUECTL_BENCH_DIR")
	if root == "" {
		root = os.TempDir()
	}
	dir := filepath.Join(root, fmt.Sprintf("queuectl-serve-bench-%d", n))
	if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := spool.DirsOf(dir).Make(); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "queue.db")
	s, err := claim.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const batch = 10000
	for i := 0; i < n; i += batch {
		jobs := make([]claim.NewJob, batch)
		for k := range jobs {
			seq := i + k
			jobs[k] = claim.NewJob{ID: fmt.Sprintf("job-%07d", seq), Command: "make -C /srv/app part-" + strconv.Itoa(seq),
				Queue: fmt.Sprintf("queue-%d", seq%5)}
		}
		if _, err := s.EnqueueEach(ctx, jobs); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	now := time.Now().UnixNano()
	day := int64(24 * time.Hour)
	for _, q := range []string{
		`UPDATE jobs SET state = CASE seq % 20 WHEN 0 THEN 'pending' WHEN 1 THEN 'dead' WHEN 2 THEN 'failed' ELSE 'completed' END,
			attempts = 1, runs = 1, exit_code = CASE seq % 20 WHEN 1 THEN 1 WHEN 2 THEN 1 ELSE 0 END,
			updated_at = ?1 - ?2 + seq * (?2 / ` + strconv.Itoa(n) + `),
			finished_at = CASE WHEN seq % 20 <> 2 THEN ?1 - ?2 + seq * (?2 / ` + strconv.Itoa(n) + `) END
		WHERE seq % 20 <> 0`,
		`INSERT INTO runs (job_id, attempt, worker_id, host, pid, started_at, exec_at, ended_at, outcome, exit_code, stdout_path, stderr_path)
		SELECT id, 1, 'bench', 'bench', 1, updated_at - 2000000000, updated_at - 1990000000, updated_at,
			CASE state WHEN 'completed' THEN 'completed' ELSE 'failed' END, exit_code,
			'logs/' || id || '/1.out', 'logs/' || id || '/1.err'
		FROM jobs WHERE state <> 'pending'`,
	} {
		if _, err := db.Exec(q, now, day); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "complete"), nil, 0o600); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkServeMillion times the pages, API reads and /metrics scrapes of
// a store of a million jobs: deep keyset pages cost what the first does.
//
//	go test ./serve -run '^$' -bench ServeMillion -benchtime 200x
func BenchmarkServeMillion(b *testing.B) {
	dir := bigHome(b, benchJobs)
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
	// Page 1,000 of 50 jobs, newest first: 49,950 jobs past the newest.
	deep := strconv.Itoa(benchJobs - 49950)
	for _, tc := range []struct{ name, path string }{
		{"overview", "/"},
		{"jobs/page1", "/jobs"},
		{"jobs/page1000", "/jobs?after=" + deep},
		{"jobs/state=completed/page1", "/jobs?state=completed"},
		{"jobs/state=completed/page1000", "/jobs?state=completed&after=" + deep},
		{"jobs/queue=queue-3/page1000", "/jobs?queue=queue-3&after=" + deep},
		{"jobs/state=dead&queue=queue-1", "/jobs?state=dead&queue=queue-1"},
		{"jobs/prefix=job-05", "/jobs?prefix=job-05"},
		{"jobs/prefix=job-05/page100", "/jobs?prefix=job-05&after=job-0505000"},
		{"job", "/jobs/job-0500001"},
		{"dlq", "/dlq"},
		{"api/status", "/api/v1/status"},
		{"api/jobs?limit=100&newest=1", "/api/v1/jobs?limit=100&newest=1"},
		{"api/queues", "/api/v1/queues"},
		{"metrics", "/metrics"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest("GET", ts.URL+tc.path, nil)
				req.Header.Set("Accept", "text/html")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("GET %s = %d", tc.path, resp.StatusCode)
				}
			}
		})
	}
}
