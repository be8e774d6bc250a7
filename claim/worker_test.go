package claim_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func TestWorkersRegistry(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, clk := db.openClocked(t)
		if ws, err := s.Workers(ctx); len(ws) != 0 || err != nil {
			t.Errorf("Workers() of a new store = %v, %v; want none", ws, err)
		}
		if n, err := s.RequestStop(ctx); n != 0 || err != nil {
			t.Errorf("RequestStop with no workers = %d, %v; want 0, nil", n, err)
		}
		w1 := claim.WorkerInfo{ID: "host-1-a", Host: "host", PID: 1, Slots: 4}
		w2 := claim.WorkerInfo{ID: "host-2-b", Host: "host", PID: 2, Slots: 1, Queues: []string{"mail", "batch"}}
		if err := s.RegisterWorker(ctx, w1); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second)
		if err := s.RegisterWorker(ctx, w2); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterWorker(ctx, w1); err == nil {
			t.Errorf("RegisterWorker of a registered id = nil, want an error")
		}

		w1.StartedAt, w1.HeartbeatAt = t0, t0
		w2.StartedAt, w2.HeartbeatAt = t0.Add(time.Second), t0.Add(time.Second)
		w1.SlotsApplied, w2.SlotsApplied = w1.Slots, w2.Slots // a worker claims with its count
		ws, err := s.Workers(ctx)
		for i := range ws {
			ws[i].SilentSince = time.Time{} // the server's start (TestWorkersSaySinceWhenTheyCouldBeHeard)
		}
		if err != nil || !reflect.DeepEqual(ws, []claim.WorkerInfo{w1, w2}) {
			t.Errorf("Workers() = %+v, %v; want %+v", ws, err, []claim.WorkerInfo{w1, w2})
		}

		for _, id := range []string{w1.ID, w2.ID, "unknown"} {
			if stop, err := s.StopRequested(ctx, id); stop || err != nil {
				t.Errorf("StopRequested(%s) before RequestStop = %v, %v; want false, nil", id, stop, err)
			}
		}
		if n, err := s.RequestStop(ctx); n != 2 || err != nil {
			t.Errorf("RequestStop = %d, %v; want 2, nil", n, err)
		}
		for _, id := range []string{w1.ID, w2.ID} {
			if stop, err := s.StopRequested(ctx, id); !stop || err != nil {
				t.Errorf("StopRequested(%s) after RequestStop = %v, %v; want true, nil", id, stop, err)
			}
		}
		if stop, err := s.StopRequested(ctx, "unknown"); stop || err != nil {
			t.Errorf("StopRequested(unknown) = %v, %v; want false, nil", stop, err)
		}

		if err := s.RemoveWorker(ctx, w1.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveWorker(ctx, "unknown"); err != nil {
			t.Errorf("RemoveWorker(unknown) = %v, want nil", err)
		}
		ws, _ = s.Workers(ctx)
		if len(ws) != 1 || ws[0].ID != w2.ID || !ws[0].Stopping {
			t.Errorf("after RemoveWorker(%s), Workers() = %+v", w1.ID, ws)
		}
	})
}

// TestWorkersRecordTheirSettings: a worker's registration keeps the lease
// and heartbeat interval it runs with, by which readers of other hosts
// judge it, and its process's start, by which readers of its own host
// do; and so does the registration a renewal makes again after a reaper
// removed the row.
func TestWorkersRecordTheirSettings(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t)
		w := claim.WorkerInfo{ID: "far-1-a", Host: "far", PID: 1, PIDStart: 1 << 40, Slots: 2, Lease: 10 * time.Minute, HeartbeatInterval: time.Minute}
		if err := s.RegisterWorker(ctx, w); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			ws, err := s.Workers(ctx)
			if err != nil || len(ws) != 1 || ws[0].Lease != w.Lease || ws[0].HeartbeatInterval != w.HeartbeatInterval || ws[0].PIDStart != w.PIDStart {
				t.Fatalf("Workers() %s = %+v, %v; want one with lease %v, heartbeat interval %v, process start %d", when, ws, err, w.Lease, w.HeartbeatInterval, w.PIDStart)
			}
		}
		check("after RegisterWorker")
		if err := s.RemoveWorker(ctx, w.ID); err != nil {
			t.Fatal(err)
		}
		if r, err := s.Renew(ctx, w, w.Lease); err != nil || !r.Registered {
			t.Fatalf("Renew of a removed worker = %+v, %v; want it registered again", r, err)
		}
		check("after a renewal registered it again")
	})
}

// TestWorkersSaySinceWhenTheyCouldBeHeard: on PostgreSQL, a worker's row
// says when its server started (SilentSince), from which, when it came
// after the worker's heartbeat, its silence counts; on SQLite, which has
// no server, nothing.
func TestWorkersSaySinceWhenTheyCouldBeHeard(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s, _ := db.openClocked(t) // heartbeats dated 2026-11-21
		if err := s.RegisterWorker(ctx, claim.WorkerInfo{ID: "w", Host: "far", PID: 1, Slots: 1}); err != nil {
			t.Fatal(err)
		}
		ws, err := s.Workers(ctx)
		if err != nil || len(ws) != 1 {
			t.Fatalf("Workers() = %+v, %v", ws, err)
		}
		w, now := ws[0], time.Now()
		if db.engine == claim.EngineSQLite {
			if !w.SilentSince.IsZero() || w.Silence(now) != now.Sub(w.HeartbeatAt) {
				t.Errorf("SQLite: SilentSince %v, silence %v; want none, the heartbeat's", w.SilentSince, w.Silence(now))
			}
			return
		}
		if !w.SilentSince.After(w.HeartbeatAt) || w.SilentSince.After(now) || w.Silence(now) != now.Sub(w.SilentSince) {
			t.Errorf("PostgreSQL: SilentSince %v, heartbeat %v, silence %v; want the server's start, after the heartbeat and before now, counted from",
				w.SilentSince, w.HeartbeatAt, w.Silence(now))
		}
	})
}

// TestScaledToSaysWhatAWorkerClaimsWith: a worker's row says the slots it
// is to have (Slots) and those it claims with (SlotsApplied): both its
// count when it registers; a scale changes the first only, until the
// worker says it took it.
func TestScaledToSaysWhatAWorkerClaimsWith(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		w := claim.WorkerInfo{ID: "w", Host: "here", PID: 1, Slots: 3}
		if err := s.RegisterWorker(ctx, w); err != nil {
			t.Fatal(err)
		}
		check := func(when string, slots, applied int) {
			t.Helper()
			ws, err := s.Workers(ctx)
			if err != nil || len(ws) != 1 || ws[0].Slots != slots || ws[0].SlotsApplied != applied {
				t.Fatalf("Workers() %s = %+v, %v; want one with slots %d, applied %d", when, ws, err, slots, applied)
			}
		}
		check("after RegisterWorker", 3, 3)
		if _, err := s.ScaleWorkers(ctx, 1); err != nil {
			t.Fatal(err)
		}
		check("after ScaleWorkers(1)", 1, 3)
		if err := s.ScaledTo(ctx, w.ID, 1); err != nil {
			t.Fatal(err)
		}
		check("after ScaledTo(1)", 1, 1)
		if err := s.ScaledTo(ctx, "gone", 1); err != nil {
			t.Errorf("ScaledTo of a worker not registered: %v, want no error", err)
		}
	})
}

// TestWorkerLeaseOr: a row that recorded no settings (an older queuectl's)
// is judged by the reader's.
func TestWorkerLeaseOr(t *testing.T) {
	old := claim.WorkerInfo{ID: "old"}
	if got := old.LeaseOr(30 * time.Second); got != 30*time.Second {
		t.Errorf("LeaseOr(30s) of a row without a lease = %v, want 30s", got)
	}
	if got := old.HeartbeatOr(5 * time.Second); got != 5*time.Second {
		t.Errorf("HeartbeatOr(5s) of a row without an interval = %v, want 5s", got)
	}
	w := claim.WorkerInfo{ID: "new", Lease: time.Hour, HeartbeatInterval: time.Minute}
	if got := w.LeaseOr(30 * time.Second); got != time.Hour {
		t.Errorf("LeaseOr(30s) of a worker with lease 1h = %v, want 1h", got)
	}
	if got := w.HeartbeatOr(5 * time.Second); got != time.Minute {
		t.Errorf("HeartbeatOr(5s) of a worker with interval 1m = %v, want 1m", got)
	}
}
