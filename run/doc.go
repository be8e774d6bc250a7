// Package run is the worker: the loop behind `queuectl worker start`.
//
// A Worker runs Slots goroutines, each claiming a job from the store, running
// it with /bin/sh -c in a process group of its own (exec.go) and, where the
// worker's cgroup v2 directory is writable, in the cgroup the slot keeps
// (cgroups_linux.go; a run with a memory limit gets one of its own), streaming its
// stdout and stderr to log files (logs.go), and recording the end: completed,
// failed with a backoff, or dead (then the dead/ file, through spool). Each
// slot completes its job and claims the next in one store call.
//
// Around the slots, goroutines of the Worker's own:
//   - dispatch wakes an idle slot on each of the store's change
//     notifications, and a slot that claims wakes the next (wake.go;
//     cancels, pauses and new jobs arrive the same way);
//   - heartbeat renews the leases of the runs this process holds, and fences
//     them (stops them, to run again) when the store was away longer than a
//     lease (outage.go); a renewal puts back the worker's registration when
//     another host's reaper took it for dead meanwhile;
//   - reap recovers runs of workers that died, after killing what is left of
//     their process groups (reaper.go);
//   - schedule fires due schedules; prune applies log retention.
//
// Shutdown has two stages, driven by two contexts from the CLI: soft stops
// claiming and lets running jobs finish; hard stops them (TERM, then KILL)
// and puts them back to pending. Final bookkeeping uses
// context.WithoutCancel, so a shutdown never strands a job. The worker is
// the child subreaper of its jobs (children_linux.go), so nothing a job
// starts outlives its run.
//
// Events (event.go) are how the worker speaks: one line per event on
// stderr, or one JSON object per line.
//
// Tail follows one job from outside the worker (`queuectl run`), or in its
// process for a `run` handed over its socket: then Nudges tells it each
// start (the job and run as claimed), each end, and each part of the
// output as the worker copies it (nudge.go). Reach is
// how the worker and such a follower (run, wait, logs -f) ride out a store
// they cannot reach for a while, saying so once each way.
package run
