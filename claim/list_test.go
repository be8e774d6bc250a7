package claim_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// pages lists f page by page, following the keyset cursor, and returns
// each page's ids.
func pages(tb testing.TB, s *claim.Store, f claim.Filter) [][]string {
	tb.Helper()
	var out [][]string
	for {
		jobs, err := s.List(tb.Context(), f)
		if err != nil {
			tb.Fatalf("List(%+v) = %v", f, err)
		}
		if len(jobs) == 0 {
			return out
		}
		out = append(out, strings.Fields(ids(jobs)))
		last := jobs[len(jobs)-1]
		f.After, f.AfterID = last.Seq, ""
		if f.IDPrefix != "" {
			f.After, f.AfterID = 0, last.ID
		}
	}
}

// TestListKeysetPages: following the last job of each page walks every
// matching job once, in both orders, with every filter.
func TestListKeysetPages(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		for i := range 7 {
			mustEnqueue(t, s, claim.NewJob{ID: fmt.Sprintf("job-%d", i), Command: "true", Queue: []string{"a", "b"}[i%2]})
		}
		mustEnqueue(t, s, claim.NewJob{ID: "other", Command: "true", Queue: "a"})
		mustClaim(t, s, claimant(t, "w")) // job-0 is processing
		for _, tc := range []struct {
			f    claim.Filter
			want [][]string
		}{
			{claim.Filter{Limit: 3}, [][]string{{"job-0", "job-1", "job-2"}, {"job-3", "job-4", "job-5"}, {"job-6", "other"}}},
			{claim.Filter{Limit: 3, Newest: true}, [][]string{{"other", "job-6", "job-5"}, {"job-4", "job-3", "job-2"}, {"job-1", "job-0"}}},
			{claim.Filter{Limit: 2, Queue: "a"}, [][]string{{"job-0", "job-2"}, {"job-4", "job-6"}, {"other"}}},
			{claim.Filter{Limit: 2, Queue: "a", Newest: true}, [][]string{{"other", "job-6"}, {"job-4", "job-2"}, {"job-0"}}},
			{claim.Filter{Limit: 4, State: claim.Pending, Queue: "a"}, [][]string{{"job-2", "job-4", "job-6", "other"}}},
			{claim.Filter{Limit: 2, IDPrefix: "job-"}, [][]string{{"job-0", "job-1"}, {"job-2", "job-3"}, {"job-4", "job-5"}, {"job-6"}}},
			{claim.Filter{Limit: 5, IDPrefix: "job", Newest: true, State: claim.Pending}, [][]string{{"job-6", "job-5", "job-4", "job-3", "job-2"}, {"job-1"}}},
			{claim.Filter{IDPrefix: "job-1"}, [][]string{{"job-1"}}},
			{claim.Filter{IDPrefix: "o", Queue: "b"}, nil},
			{claim.Filter{IDPrefix: "z"}, nil},
			{claim.Filter{State: claim.Dead, Queue: "a"}, nil},
			{claim.Filter{Limit: 2, State: claim.Pending, Queue: "b", Newest: true}, [][]string{{"job-5", "job-3"}, {"job-1"}}},
			{claim.Filter{Limit: 3, IDPrefix: "job-", Newest: true, Queue: "a"}, [][]string{{"job-6", "job-4", "job-2"}, {"job-0"}}},
		} {
			if got := pages(t, s, tc.f); !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("pages of %+v = %v, want %v", tc.f, got, tc.want)
			}
		}
	})
}

func TestListBadPrefix(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		s := db.open(t)
		for _, prefix := range []string{"-x", "a b", "a/..", "é"} {
			_, err := s.List(t.Context(), claim.Filter{IDPrefix: prefix})
			if !errors.Is(err, claim.ErrInvalid) {
				t.Errorf("List(IDPrefix %q) = %v, want ErrInvalid", prefix, err)
			}
		}
	})
}

// TestJobsStream: the stream yields what List returns, one job at a time;
// a caller that stops early frees the store at once; a bad prefix is an
// error, yielded.
func TestJobsStream(t *testing.T) {
	ForEachEngine(t, func(t *testing.T, s *claim.Store) {
		for i := range 25 {
			mustEnqueue(t, s, claim.NewJob{ID: fmt.Sprintf("job-%02d", i), Command: "true", Queue: []string{"a", "b"}[i%2]})
		}
		for _, f := range []claim.Filter{{}, {Newest: true}, {Queue: "b"}, {Limit: 7}, {IDPrefix: "job-1"}, {State: claim.Dead}} {
			want, err := s.List(t.Context(), f)
			if err != nil {
				t.Fatal(err)
			}
			var got []claim.Job
			for j, err := range s.Jobs(t.Context(), f) {
				if err != nil {
					t.Fatalf("Jobs(%+v): %v", f, err)
				}
				got = append(got, j)
			}
			if ids(got) != ids(want) {
				t.Errorf("Jobs(%+v) = %s, want %s", f, ids(got), ids(want))
			}
		}
		n := 0
		for _, err := range s.Jobs(t.Context(), claim.Filter{}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 3 {
				break
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if _, err := s.Enqueue(ctx, claim.NewJob{ID: "after-break", Command: "true"}); err != nil {
			t.Errorf("Enqueue after a stream stopped early = %v; the stream still holds the store", err)
		}
		for _, err := range s.Jobs(t.Context(), claim.Filter{IDPrefix: "-x"}) {
			if !errors.Is(err, claim.ErrInvalid) {
				t.Errorf("Jobs with a bad prefix yielded %v, want ErrInvalid", err)
			}
		}
	})
}
