package serve_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// TestBrowserNarrow: on a phone's width (390 px) every page's navigation
// shows all its links inside the screen, and no page scrolls sideways:
// wide tables scroll within their card.
func TestBrowserNarrow(t *testing.T) {
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	h := pendingHome(t)
	h.enqueue(t, claim.NewJob{ID: "nightly-db-backup-of-the-main-cluster", Command: "pg_dump --format=custom --file=/backup/app.dump app && rsync -a /backup/ offsite:/backup/"})
	one := 1
	h.enqueue(t, claim.NewJob{ID: "restore-check-of-last-night", Command: "pg_restore --list /backup/app.dump", MaxRetries: &one, Queue: "checks"})
	c := claim.Claimant{WorkerID: "w1", Host: "h1", PID: 1, Lease: time.Minute, LogDir: t.TempDir(), Queues: []string{"checks"}}
	j, r, err := h.store.Claim(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Fail(context.Background(), j, r, &one, "exit status 1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.dir, "spool", "nightly-report-for-the-board.json"), []byte(`{"command": "make report", "prio": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"ingest"}, {"schedule", "add", "nightly-report-for-the-board", "--cron", "0 3 * * *", "--command", "make -C /srv/reports board.pdf && mail -s report board@example.com < board.pdf"}} {
		if _, code := h.cli(t, args...); code != 0 {
			t.Fatalf("queuectl %q: exit %d", args, code)
		}
	}
	ts := h.serve(t, serve.Options{})
	for _, path := range []string{"/", "/jobs", "/jobs/nightly-db-backup-of-the-main-cluster", "/dlq", "/rejected", "/schedules"} {
		navigate(t, ctx, ts.URL+path)
		hidden := eval[[]string](t, ctx, `[...document.querySelectorAll("header.top a")].filter(a => {
			const r = a.getBoundingClientRect();
			return r.left < 0 || r.right > window.innerWidth || r.width == 0;
		}).map(a => a.textContent)`)
		if len(hidden) > 0 {
			t.Errorf("%s at 390 px: the links %q are not inside the screen", path, hidden)
		}
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("%s at 390 px: the page is %d px wide and scrolls sideways", path, w)
			screenshot(t, ctx, "narrow")
		}
	}
}
