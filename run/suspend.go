package run

import (
	"syscall"

	"github.com/queuectl/queuectl/claim"
)

// Suspend stops the processes of job id's run in this worker, as Ctrl-Z
// of the `run` that follows the job asks (stop), or lets them go on. The
// run's process group gets SIGSTOP and SIGCONT. Not SIGTSTP, which a
// terminal sends a command in its foreground: a job runs in a session of
// its own, without a terminal, and the kernel drops SIGTSTP for a process
// group whose processes no other group of the session parents (an
// orphaned group, as every job's is). A run that starts while its
// job is stopped (between a claim and its shell's start) is stopped as
// its group is known. A job that is not running here is left alone; its
// timeout and lease go on meanwhile, as a command's timeout(1) would.
func (w *Worker) Suspend(id string, stop bool) {
	w.steer.suspend(id, stop)
}

// suspend records whether job id is stopped, and signals the process
// group of its run, if started.
func (s *steering) suspend(id string, stop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stop {
		if s.suspended == nil {
			s.suspended = map[string]bool{}
		}
		s.suspended[id] = true
	} else {
		delete(s.suspended, id)
	}
	for run, pgid := range s.groups {
		if run.JobID == id {
			signalGroup(pgid, stop)
		}
	}
}

// started records the process group of a run whose shell started, and
// stops it at once when its job is stopped.
func (s *steering) started(id claim.RunID, pgid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = map[claim.RunID]int{}
	}
	s.groups[id] = pgid
	if s.suspended[id.JobID] {
		signalGroup(pgid, true)
	}
}

// signalGroup sends group pgid SIGSTOP (stop) or SIGCONT.
func signalGroup(pgid int, stop bool) {
	sig := syscall.SIGCONT
	if stop {
		sig = syscall.SIGSTOP
	}
	syscall.Kill(-pgid, sig)
}
