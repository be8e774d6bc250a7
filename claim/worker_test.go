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
		ws, err := s.Workers(ctx)
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
