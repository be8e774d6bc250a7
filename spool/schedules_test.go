package spool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A schedule file that no writer could finish is rejected by the pass that
// finds it, as a spool file is; one only cut short waits for its writer.
func TestScheduleFileGarbageRejectedAtOnce(t *testing.T) {
	home := t.TempDir()
	d := &ScheduleDir{Dirs: DirsOf(home), Store: mustOpenStoreAt(t, filepath.Join(home, "queue.db")), Log: t.Logf}
	if err := d.Dirs.Make(); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"garbage.json": "not json\n", "cut.json": `{"cron": "@hourly", "command": "tr`} {
		if err := os.WriteFile(filepath.Join(d.Dirs.Schedules, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	reason, err := os.ReadFile(filepath.Join(d.Dirs.Rejected, "garbage.json"+reasonExt))
	if err != nil || !strings.HasPrefix(string(reason), "garbage.json: job spec is not valid JSON at byte 2: ") {
		t.Errorf("reason of garbage.json = %q, %v; want it rejected as not valid JSON", reason, err)
	}
	if !exists(filepath.Join(d.Dirs.Schedules, "cut.json")) || exists(filepath.Join(d.Dirs.Rejected, "cut.json")) {
		t.Errorf("cut.json was moved; want it left in schedules/ for its writer")
	}
}
