package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScaleDownStartsNothingUntilFewerRun: a worker of 3 slots scaled down
// to 1 while 3 jobs run lets them finish and starts no job of its backlog
// until none of them runs, as worker scale --help says; a slot whose job
// completes does not claim the next one in the same breath.
func TestScaleDownStartsNothingUntilFewerRun(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	w := h.startRegistered(h.command("worker", "start", "--count", "3", "--no-spool"))
	gated := func(id string) string {
		started, gate := filepath.Join(dir, id+".started"), filepath.Join(dir, id+".go")
		return "echo > " + started + "; for i in $(seq 1200); do [ -e " + gate + " ] && break; sleep 0.05; done"
	}
	release := func(id string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, id+".go"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		h.must("enqueue", "--id", id, "--command", gated(id))
	}
	waitFor(t, 30*time.Second, "a, b and c to start", func() bool {
		return h.count("processing") == 3
	})
	h.must("worker", "scale", "1")
	waitReport(t, 30*time.Second, "the worker to scale down", func() bool {
		return strings.Contains(w.stderr.String(), "scaled to 1 slot(s)")
	}, w.stderr.String)
	h.must("enqueue", "--id", "d", "--command", gated("d"))
	h.must("enqueue", "--id", "e", "--command", gated("e"))

	// a and b end while c runs: one job runs, as many as the worker's one
	// slot, so d and e wait.
	for _, id := range []string{"a", "b"} {
		release(id)
		waitFor(t, 30*time.Second, id+" to complete", func() bool { return h.show(id).State == "completed" })
		for _, next := range []string{"d", "e"} {
			if s := h.show(next).State; s != "pending" {
				t.Fatalf("after %s completed, with c running on a worker scaled to 1 slot: %s is %s, want pending\nworker: %s", id, next, s, w.stderr)
			}
		}
	}
	// Once c ends, d and e run one at a time.
	release("c")
	waitFor(t, 30*time.Second, "d or e to start", func() bool {
		_, errD := os.Stat(filepath.Join(dir, "d.started"))
		_, errE := os.Stat(filepath.Join(dir, "e.started"))
		return errD == nil || errE == nil
	})
	release("d")
	release("e")
	h.must("wait", "d", "e", "--timeout", "1m")
	d, e := h.show("d").Runs[0], h.show("e").Runs[0]
	if d.StartedAt.Before(e.EndedAt) && e.StartedAt.Before(d.EndedAt) {
		t.Fatalf("d ran %v–%v and e %v–%v: both at once on one slot", d.StartedAt, d.EndedAt, e.StartedAt, e.EndedAt)
	}
}

// TestScaleHoldsFromItsReturn: once `worker scale 1` has returned, jobs
// enqueued after it run one at a time, even when the worker was not
// looking at the store when the scale was written (it looks at most every
// so often: a change just before, here a pause of another queue, makes it
// look away then). `worker scale` returns when each worker claims with
// the new count.
func TestScaleHoldsFromItsReturn(t *testing.T) {
	h := newHome(t)
	h.startRegistered(h.command("worker", "start", "--count", "4", "--no-spool"))
	h.must("pause", "--queue", "elsewhere")
	h.must("worker", "scale", "1")
	var jobs strings.Builder
	for _, id := range []string{"a", "b", "c"} {
		jobs.WriteString(`{"id": "` + id + `", "command": "sleep 0.3"}` + "\n")
	}
	if code := h.startInput(jobs.String(), "enqueue", "-").exit(t, time.Minute); code != 0 {
		t.Fatalf("enqueue -: exit %d", code)
	}
	h.must("wait", "a", "b", "c", "--timeout", "1m")
	ids := []string{"a", "b", "c"}
	var views []jobView
	for _, id := range ids {
		views = append(views, h.show(id))
	}
	for i := range views {
		for k := i + 1; k < len(views); k++ {
			x, y := views[i].Runs[0], views[k].Runs[0]
			if x.StartedAt.Before(y.EndedAt) && y.StartedAt.Before(x.EndedAt) {
				t.Errorf("%s ran %v–%v and %s %v–%v: both at once after worker scale 1 returned", ids[i],
					x.StartedAt.Format(time.StampMicro), x.EndedAt.Format(time.StampMicro), ids[k],
					y.StartedAt.Format(time.StampMicro), y.EndedAt.Format(time.StampMicro))
			}
		}
	}
}
