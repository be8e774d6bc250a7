package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/spool"
)

// throughput: Jobs `true` jobs through `worker start --count Slots --drain`,
// against a bare loop that runs `sh -c true` Slots at a time. The bare loop
// runs before and after the worker, and the limit is their mean.
func (b *Suite) throughput(ctx context.Context) ([]Result, error) {
	home, err := b.home(ctx, "throughput")
	if err != nil {
		return nil, err
	}
	if err := b.fill(ctx, home, b.Jobs, "true"); err != nil {
		return nil, err
	}
	before, err := bareShell(ctx, b.Jobs, b.Slots)
	if err != nil {
		return nil, err
	}
	took, err := b.timeRun(ctx, home, "worker", "start", "--count", strconv.Itoa(b.Slots), "--drain", "--no-spool")
	if err != nil {
		return nil, err
	}
	if err := b.expect(ctx, home, claim.Completed, b.Jobs); err != nil {
		return nil, err
	}
	after, err := bareShell(ctx, b.Jobs, b.Slots)
	if err != nil {
		return nil, err
	}
	limit := perSecond(b.Jobs, (before+after)/2)
	return []Result{
		atLeast(fmt.Sprintf("throughput: %d true jobs, %d slots", b.Jobs, b.Slots), perSecond(b.Jobs, took),
			limit, fmt.Sprintf("%.0f/s: sh -c true, %d at a time", limit, b.Slots), 0.80),
	}, nil
}

// bareShell runs n `sh -c true`, slots at a time, the way a worker starts
// a job but with nothing else, and returns how long that took.
func bareShell(ctx context.Context, n, slots int) (time.Duration, error) {
	todo := make(chan struct{}, n)
	for range n {
		todo <- struct{}{}
	}
	close(todo)
	errs := make(chan error, slots)
	start := time.Now()
	var wg sync.WaitGroup
	for range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range todo {
				if err := exec.CommandContext(ctx, "/bin/sh", "-c", "true").Run(); err != nil {
					errs <- fmt.Errorf("bare loop: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	return took, <-errs
}

// ingest: Jobs fresh spool files through `queuectl ingest` (take, read,
// parse, fsync'd batch commit, unlink), against a bare loop that reads and
// unlinks as many files in the same file system, before and after.
func (b *Suite) ingest(ctx context.Context) ([]Result, error) {
	home, err := b.home(ctx, "ingest")
	if err != nil {
		return nil, err
	}
	bareDir := filepath.Join(b.run, "ingest-bare")
	before, err := bareIngest(bareDir, b.Jobs)
	if err != nil {
		return nil, err
	}
	spoolDir := spool.DirsOf(home).Spool
	if err := os.MkdirAll(spoolDir, 0o700); err != nil {
		return nil, fmt.Errorf("create spool: %w", err)
	}
	if err := dropSpecs(spoolDir, b.Jobs); err != nil {
		return nil, err
	}
	took, err := b.timeRun(ctx, home, "ingest")
	if err != nil {
		return nil, err
	}
	if err := b.expect(ctx, home, claim.Pending, b.Jobs); err != nil {
		return nil, err
	}
	after, err := bareIngest(bareDir, b.Jobs)
	if err != nil {
		return nil, err
	}
	limit := perSecond(b.Jobs, (before+after)/2)
	return []Result{
		atLeast(fmt.Sprintf("ingest: %d spool files to committed jobs", b.Jobs), perSecond(b.Jobs, took),
			limit, fmt.Sprintf("%.0f/s: read+unlink loop", limit), 0.50),
	}, nil
}

// dropSpecs writes n job files into dir, as a writer that does not bother
// with a temporary name would.
func dropSpecs(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("job-%07d.json", i))
		if err := os.WriteFile(name, []byte(`{"command": "true"}`+"\n"), 0o600); err != nil {
			return fmt.Errorf("drop spool file: %w", err)
		}
	}
	return nil
}

// bareIngest drops n files into dir and times reading and unlinking them.
func bareIngest(dir string, n int) (time.Duration, error) {
	if err := dropSpecs(dir, n); err != nil {
		return 0, err
	}
	start := time.Now()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("bare ingest: %w", err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if _, err := os.ReadFile(path); err != nil {
			return 0, fmt.Errorf("bare ingest: %w", err)
		}
		if err := os.Remove(path); err != nil {
			return 0, fmt.Errorf("bare ingest: %w", err)
		}
	}
	return time.Since(start), nil
}
