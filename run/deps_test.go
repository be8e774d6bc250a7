package run

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

func TestChainRunsInOrderAndDiesTogether(t *testing.T) {
	s := mustOpenStore(t)
	dir := t.TempDir()
	order := filepath.Join(dir, "order")
	one := 1
	hooks := claim.Hooks{OnDead: `echo "$QUEUECTL_JOB_ID $QUEUECTL_ERROR" >> ` + filepath.Join(dir, "dead")}
	if _, err := s.EnqueueAll(context.Background(), []claim.NewJob{
		{ID: "c", Command: "echo c >> " + order, After: []string{"b"}},
		{ID: "b", Command: "echo b >> " + order, After: []string{"a"}},
		{ID: "a", Command: "echo a >> " + order},
		{ID: "x", Command: "exit 4", MaxRetries: &one, Hooks: hooks},
		{ID: "y", Command: "echo y >> " + order, After: []string{"x"}, Hooks: hooks},
		{ID: "z", Command: "echo z >> " + order, After: []string{"y", "a"}, Hooks: hooks},
	}); err != nil {
		t.Fatal(err)
	}
	w := newWorker(t, s)
	var mu sync.Mutex
	var died []string
	w.OnDead = func(_ context.Context, j claim.Job) {
		mu.Lock()
		defer mu.Unlock()
		died = append(died, j.ID)
	}
	drain(t, w)

	if got := readFile(t, order); got != "a\nb\nc\n" {
		t.Errorf("jobs ran in the order %q, want a, b, c, and never y or z", got)
	}
	slices.Sort(died)
	if !slices.Equal(died, []string{"x", "y", "z"}) {
		t.Errorf("dead/ files for %v, want x, y, z", died)
	}
	for id, want := range map[string]string{"y": "dependency x ended dead: exit 4", "z": "dependency x ended dead: exit 4 (via y)"} {
		if j := get(t, s, id); j.State != claim.Dead || j.LastError != want {
			t.Errorf("%s = %s %q, want dead %q", id, j.State, j.LastError, want)
		}
	}
	hooked := readFile(t, filepath.Join(dir, "dead"))
	for _, want := range []string{"x exit status 4\n", "y dependency x ended dead: exit 4\n", "z dependency x ended dead: exit 4 (via y)\n"} {
		if !strings.Contains(hooked, want) {
			t.Errorf("on_dead hooks wrote:\n%s\nwant a line %q", hooked, want)
		}
	}
	runs, err := s.Runs(context.Background(), "x")
	if err != nil || len(runs) != 1 || runs[0].Hooks != "on_dead ok" {
		t.Errorf("x's run hooks = %+v, %v; want on_dead ok", runs, err)
	}
}
