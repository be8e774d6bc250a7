package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/handoff/wire"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
)

// workerChecks: the registered workers, live or gone, and whether the live
// ones renew their heartbeat on time, each by the lease and heartbeat
// interval it runs with. It returns how many are live on this
// host, the one whose spool they read (-1: unknown).
func workerChecks(ctx context.Context, h *home) ([]report.Check, int) {
	all, err := h.store.Workers(ctx)
	if err != nil {
		return []report.Check{{Name: "workers", Status: report.CheckFail, Detail: err.Error(), Fix: "check the store"}}, -1
	}
	var checks []report.Check
	host, now := run.HostID(), time.Now()
	live, slots, oldest, here := 0, 0, time.Duration(0), 0
	for _, w := range all {
		if w.Host == host && !run.Gone(w, host, now, h.config.Lease) {
			here++
		}
		// Judged by its silence (from its server's start, when later);
		// said by its heartbeat.
		silent, age := w.Silence(now), now.Sub(w.HeartbeatAt).Round(time.Second)
		where := fmt.Sprintf("worker %s (pid %d on %s)", w.ID, w.PID, w.Host)
		switch {
		case run.Gone(w, host, now, h.config.Lease):
			checks = append(checks, report.Check{Name: "workers", Status: report.CheckFail,
				Detail: fmt.Sprintf("%s is gone without stopping; its last heartbeat was %v ago", where, age),
				Fix:    "start a worker (queuectl worker start): it recovers the gone one's jobs and removes it"})
		case silent > 2*w.HeartbeatOr(h.config.HeartbeatInterval)+time.Second:
			checks = append(checks, report.Check{Name: "workers", Status: report.CheckWarn,
				Detail: fmt.Sprintf("%s is late: its last heartbeat was %v ago (heartbeat-interval %v)", where, age, w.HeartbeatOr(h.config.HeartbeatInterval)),
				Fix:    "see whether its host is overloaded or its store slow (queuectl bench)"})
			live, slots = live+1, slots+w.Slots
		default:
			live, slots, oldest = live+1, slots+w.Slots, max(oldest, age)
		}
	}
	switch {
	case live == 0:
		checks = append(checks, report.Check{Name: "workers", Status: report.CheckWarn, Detail: "no live worker: jobs wait",
			Fix: "queuectl worker start (or systemctl --user start queuectl)"})
	case len(checks) == 0:
		checks = append(checks, ok("workers", "%d live, %d slots, every heartbeat within %v", live, slots, oldest))
	}
	return checks, here
}

// spoolChecks: the spool is safe to ingest, its files find a worker of
// this host (live, < 0: unknown; a worker reads its own host's spool
// only), and nothing was rejected.
func spoolChecks(h *home, live int) []report.Check {
	waiting, rejected, err := spool.Count(h.dirs)
	if err != nil {
		return []report.Check{{Name: "spool", Status: report.CheckFail, Detail: err.Error(), Fix: "ls -l " + h.dirs.Spool}}
	}
	c := ok("spool", "%s: safe, %d file(s) waiting", h.dirs.Spool, waiting)
	var u *spool.UnsafeError
	switch err := spool.CheckSpool(h.dirs.Spool); {
	case errors.As(err, &u):
		c = report.Check{Name: "spool", Status: report.CheckFail, Detail: fmt.Sprintf("%s: %s; nothing is ingested", u.Dir, u.Problem), Fix: u.Fix}
	case err != nil:
		c = report.Check{Name: "spool", Status: report.CheckFail, Detail: err.Error(), Fix: "queuectl worker start creates it"}
	case waiting > 0 && live == 0:
		c = report.Check{Name: "spool", Status: report.CheckWarn, Detail: fmt.Sprintf("%d file(s) wait in %s and no worker of this host ingests them", waiting, h.dirs.Spool),
			Fix: "queuectl worker start on this host, or queuectl ingest (a worker of another host reads its own spool only)"}
	case waiting > 0 && live > 0 && !homeServed(h):
		c = report.Check{Name: "spool", Status: report.CheckWarn, Detail: fmt.Sprintf("%d file(s) wait in %s and no worker of this home ingests them", waiting, h.dirs.Spool),
			Fix: shellQuote([]string{"queuectl", "--home", h.dir, "worker", "start"}) + ", or " + shellQuote([]string{"queuectl", "--home", h.dir, "ingest"}) +
				" (a worker reads its own home's spool only; those of this host serve other homes)"}
	}
	r := ok("rejected", "no rejected file")
	if rejected > 0 {
		r = report.Check{Name: "rejected", Status: report.CheckWarn, Detail: fmt.Sprintf("%d file(s) in %s could not become jobs", rejected, h.dirs.Rejected),
			Fix: "queuectl rejected list shows why; then queuectl rejected retry NAME or rejected purge NAME"}
	}
	return []report.Check{c, r}
}

// homeServed reports whether a worker of this home lives: each serves, or
// finds served, the home's enqueue socket (a worker of another home on this
// host, sharing the store, reads its own spool only). When that cannot be
// told, it answers true: no warning on a guess.
func homeServed(h *home) bool {
	ok, err := wire.Listening(filepath.Join(h.dir, wire.SocketName))
	return ok || err != nil
}

// diskChecks: room under the home for the store and the logs, and on each
// file system of its own that logs/ or the store's directory is on (a
// mount there that fills up stops every run, or every write, while the
// home has room).
func diskChecks(h *home) []report.Check {
	dirs := []string{h.dir, h.logs}
	if claim.EngineFor(h.db) == claim.EngineSQLite {
		dirs = append(dirs, filepath.Dir(h.db))
	}
	var checks []report.Check
	seen := map[uint64]bool{}
	for i, dir := range dirs {
		var st syscall.Stat_t
		if err := syscall.Stat(dir, &st); err != nil {
			if i == 0 {
				checks = append(checks, diskCheck(dir)) // says why
			}
			continue // not there (yet): its files go to the home's
		}
		if !seen[uint64(st.Dev)] {
			seen[uint64(st.Dev)] = true
			checks = append(checks, diskCheck(dir))
		}
	}
	return checks
}

// diskCheck: room on the file system of dir.
func diskCheck(dir string) report.Check {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return report.Check{Name: "disk", Status: report.CheckFail, Detail: fmt.Sprintf("statfs %s: %v", dir, err), Fix: "check the home's file system"}
	}
	if claim.ReadOnlyFS(dir) {
		return report.Check{Name: "disk", Status: report.CheckFail, Detail: fmt.Sprintf("%s is on a read-only file system", dir),
			Fix: "mount it read-write again; if the kernel made it read-only after an I/O error (dmesg), check the file system first (fsck)"}
	}
	// A file system that does not count inodes (btrfs) says 0 of 0.
	if st.Files > 0 && (st.Ffree < 3 || st.Ffree < st.Files/100) {
		return report.Check{Name: "disk", Status: report.CheckFail,
			Detail: fmt.Sprintf("%d inode(s) free of %d under %s", st.Ffree, st.Files, dir),
			Fix:    "each run makes up to three files: remove files there, or set retention: queuectl purge --state completed --older-than 168h"}
	}
	free, total := st.Bavail*uint64(st.Bsize), st.Blocks*uint64(st.Bsize)
	c := ok("disk", "%s free of %s under %s", bytesText(free), bytesText(total), dir)
	switch {
	case free < 64<<20 || free < total/20:
		c.Status = report.CheckFail
	case free < total/10:
		c.Status = report.CheckWarn
	default:
		return c
	}
	c.Fix = "free space, or set retention: queuectl purge --state completed --older-than 168h; queuectl config set log-retention 168h"
	return c
}

// logsCheck: the volume of logs/, which grows with every run until purge
// or log-retention removes it.
func logsCheck(h *home) report.Check {
	var size, files uint64
	err := filepath.WalkDir(h.logs, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				size, files = size+uint64(fi.Size()), files+1
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return ok("logs", "%s: none yet", h.logs)
	}
	if err != nil {
		return report.Check{Name: "logs", Status: report.CheckFail, Detail: err.Error(), Fix: "ls -lR " + h.logs}
	}
	c := ok("logs", "%s in %d file(s) under %s", bytesText(size), files, h.logs)
	if h.config.LogRetention > 0 {
		c.Detail += fmt.Sprintf(", kept %v", h.config.LogRetention)
	}
	if size > 1<<30 && h.config.LogRetention == 0 {
		c.Status, c.Fix = report.CheckWarn, "queuectl config set log-retention 720h (the store keeps each run's last 64 KiB)"
	}
	return c
}

func bytesText(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
