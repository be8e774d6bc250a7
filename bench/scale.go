package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// scale: claim+complete (one claimant, in process) with 1,000 jobs queued
// and with Scale queued, in alternating rounds after a warm-up, medians
// compared; then `status` and `list --state pending --limit 100` as
// separate processes on the large store.
func (b *Suite) scale(ctx context.Context) ([]Result, error) {
	const warm, ops, rounds = 200, 2000, 5
	extra := rounds * (warm + ops) // each store keeps at least its size queued throughout
	var stores []*claim.Store
	var homes []string
	for _, n := range []int{1000, b.Scale} {
		home, err := b.home(ctx, fmt.Sprintf("scale-%d", n))
		if err != nil {
			return nil, err
		}
		if err := b.fill(ctx, home, n+extra, "true"); err != nil {
			return nil, err
		}
		s, err := b.open(home)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		stores, homes = append(stores, s), append(homes, home)
	}
	rates := [2][]float64{}
	for range rounds {
		for i, s := range stores {
			rate, err := claimComplete(ctx, s, homes[i], warm, ops)
			if err != nil {
				return nil, err
			}
			rates[i] = append(rates[i], rate)
		}
	}
	small, big := quantile(rates[0], 0.5), quantile(rates[1], 0.5)
	out := []Result{atLeast(fmt.Sprintf("claim+complete with %d queued", b.Scale), big, small,
		fmt.Sprintf("%.0f/s with 1000 queued", small), 0.80)}
	total := b.Scale + extra - rounds*(warm+ops)
	for _, c := range []struct {
		args  []string
		limit float64
	}{{[]string{"status"}, 10}, {[]string{"list", "--limit", "100"}, 20}} {
		var took []float64
		for range 11 {
			d, err := b.timeRun(ctx, homes[1], c.args...)
			if err != nil {
				return out, err
			}
			took = append(took, millis(d))
		}
		out = append(out, atMost(fmt.Sprintf("%s at %d jobs, start to exit", strings.Join(c.args, " "), total),
			quantile(took, 0.5), quantile(took, 0.99), "ms", c.limit, 0))
	}
	lists, err := b.lists(ctx, homes[1], total)
	out = append(out, lists...)
	if err != nil {
		return out, err
	}
	mem, err := b.workerMemory(ctx, homes[1], stores[1], 20, fmt.Sprintf("at %d jobs", total+8*40))
	return append(out, mem), err
}

// claimComplete claims and completes warm jobs of s, then ops more, one
// after another, and returns the rate of the ops.
func claimComplete(ctx context.Context, s *claim.Store, home string, warm, ops int) (float64, error) {
	c := claim.Claimant{WorkerID: "bench", Host: "bench", PID: os.Getpid(), Lease: time.Minute,
		LogDir: filepath.Join(home, "logs")}
	var start time.Time
	for i := range warm + ops {
		if i == warm {
			start = time.Now()
		}
		_, r, err := s.Claim(ctx, c)
		if err != nil {
			return 0, err
		}
		if _, err := s.Complete(ctx, r); err != nil {
			return 0, err
		}
	}
	return perSecond(ops, time.Since(start)), nil
}
