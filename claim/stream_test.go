package claim_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

func TestParseStream(t *testing.T) {
	tests := []struct {
		in, want string // want: the commands, or the error's start
	}{
		{`{"command": "a"}`, "a"},
		{"\n\n{\"command\": \"a\"}\n\n{\"command\": \"b\"}\n", "a b"},
		{"{\n  \"command\": \"a\"\n}\n", "a"},
		{"{\"command\": \"a\"}\n{\"command\": \"b\", \"x\": 1}\n", "a error: line 2:"},
		{"\n\n", "error: invalid input: job spec is empty"},
		{"{\"command\": \"a\"}\n" + strings.Repeat("x", claim.MaxSpecLine+10), "a error: line 2: invalid input: a job spec line is over"},
	}
	for _, tt := range tests {
		var got []string
		for nj, err := range claim.ParseStream(strings.NewReader(tt.in)) {
			if err != nil {
				got = append(got, "error: "+err.Error())
				break
			}
			got = append(got, nj.Command)
		}
		if g := strings.Join(got, " "); !strings.HasPrefix(g, tt.want) {
			t.Errorf("ParseStream(%.40q) = %q, want %q", tt.in, g, tt.want)
		}
	}
}

// TestEnqueueStream: a stream longer than a chunk is stored whole, its
// jobs waiting on earlier ones; a refusal of its last job stores none.
func TestEnqueueStream(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		stream := func(n int, last claim.NewJob) func(func(claim.NewJob, error) bool) {
			return func(yield func(claim.NewJob, error) bool) {
				for i := range n {
					nj := claim.NewJob{ID: fmt.Sprintf("j%05d", i), Command: "true"}
					if i > 0 {
						nj.After = []string{fmt.Sprintf("j%05d", i-1)}
					}
					if !yield(nj, nil) {
						return
					}
				}
				yield(last, nil)
			}
		}
		_, err := s.EnqueueStream(ctx, stream(2500, claim.NewJob{ID: "j00000", Command: "true"}), func([]claim.Result) error { return nil })
		if !errors.Is(err, claim.ErrConflict) || !strings.Contains(err.Error(), "job 2501:") {
			t.Errorf("EnqueueStream with a repeated id last = %v, want a conflict of job 2501", err)
		}
		if _, err := s.Get(ctx, "j00000"); !errors.Is(err, claim.ErrNotFound) {
			t.Errorf("Get(j00000) after a refused stream = %v, want ErrNotFound", err)
		}
		var ids []string
		n, err := s.EnqueueStream(ctx, stream(2500, claim.NewJob{ID: "last", Command: "true"}), func(rs []claim.Result) error {
			for _, r := range rs {
				ids = append(ids, r.Job.ID)
			}
			return nil
		})
		if n != 2501 || err != nil || len(ids) != 2501 || ids[0] != "j00000" || ids[2500] != "last" {
			t.Fatalf("EnqueueStream = %d, %v, results %d; want 2501, nil, in order", n, err, len(ids))
		}
		if j, err := s.Get(ctx, "j02499"); err != nil || len(j.WaitingOn) != 1 {
			t.Errorf("Get(j02499) = %v waiting on %v, %v; want waiting on j02498", j.ID, j.WaitingOn, err)
		}
	})
}

// TestEnqueueStreamOutcomes: each job of a stream gets its own outcome, in
// the stream's order, whatever chunk it is in: every seventh asks for the
// unique key the first of them holds (skipped, naming that job), and one
// waits on a later line of its chunk (stored after it, told in place).
func TestEnqueueStreamOutcomes(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		const n = 2500
		stream := func(yield func(claim.NewJob, error) bool) {
			for i := range n {
				nj := claim.NewJob{ID: fmt.Sprintf("j%05d", i), Command: "true"}
				if i%7 == 3 {
					nj.UniqueKey = "k"
				}
				if i == 1200 {
					nj.After = []string{"j01500"}
				}
				if !yield(nj, nil) {
					return
				}
			}
		}
		var got []string
		_, err := s.EnqueueStream(t.Context(), stream, func(rs []claim.Result) error {
			for _, r := range rs {
				got = append(got, fmt.Sprintf("%s %s %v", r.Outcome, r.Job.ID, r.Job.WaitingOn))
			}
			return nil
		})
		if err != nil || len(got) != n {
			t.Fatalf("EnqueueStream = %v, %d results; want nil, %d", err, len(got), n)
		}
		for i, g := range got {
			want := fmt.Sprintf("created j%05d []", i)
			switch {
			case i%7 == 3 && i > 3:
				want = "skipped j00003 []"
			case i == 1200:
				want = "created j01200 [j01500]"
			}
			if g != want {
				t.Errorf("result %d = %q, want %q", i, g, want)
			}
		}
	})
}

// TestEnqueueStreamSaysWhyJobsWait: each pending job of a stream carries
// the reason Get gives it: scheduled, waiting, paused, or none.
func TestEnqueueStreamSaysWhyJobsWait(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		if err := s.Pause(ctx, "p"); err != nil {
			t.Fatal(err)
		}
		batch := []claim.NewJob{
			{ID: "now", Command: "true"},
			{ID: "later", Command: "true", RunAt: s.Now().Add(time.Hour)},
			{ID: "after", Command: "true", After: []string{"now"}},
			{ID: "paused", Command: "true", Queue: "p"},
		}
		got := map[string]string{}
		seq := func(yield func(claim.NewJob, error) bool) {
			for _, nj := range batch {
				if !yield(nj, nil) {
					return
				}
			}
		}
		_, err := s.EnqueueStream(ctx, seq, func(rs []claim.Result) error {
			for _, r := range rs {
				got[r.Job.ID] = r.Job.PendingReason
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, nj := range batch {
			j, err := s.Get(ctx, nj.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got[nj.ID] != j.PendingReason {
				t.Errorf("job %s: the stream's reason %q, Get's %q", nj.ID, got[nj.ID], j.PendingReason)
			}
		}
		if want := (map[string]string{"now": "", "later": "scheduled", "after": "waiting", "paused": "paused"}); !maps.Equal(got, want) {
			t.Errorf("reasons = %v, want %v", got, want)
		}
	})
}
