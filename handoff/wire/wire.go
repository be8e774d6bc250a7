// Package wire is what crosses the enqueue socket (package handoff) and
// the client's end of it: the request, the worker's answer and a follow's
// frames, and Enqueue and Run, which hand a job over. It links no net:
// the client is a plain unix socket of the system's calls, so that the
// small queuectl, which links it, starts no network poller for an enqueue
// and initialises no network packages. The worker's end is handoff.Server.
package wire

import (
	"errors"
	"io"

	"github.com/queuectl/queuectl/claim/jobs"
)

// SocketName is the socket's file name in the home.
const SocketName = "enqueue.sock"

// ErrDeclined means the job was not stored through the socket: nobody
// listens, or the worker refused it. The caller stores it itself.
var ErrDeclined = errors.New("handoff: declined")

// ErrUnknown means the job was sent but no answer came: it may or may not
// be stored.
var ErrUnknown = errors.New("handoff: no answer from the worker")

// ErrHandover means the worker that followed the job stopped before it was
// finished: the caller follows it in the store.
var ErrHandover = errors.New("handoff: the worker stopped following the job")

// Request is one enqueue, one JSON line from client to worker.
type Request struct {
	Fingerprint string
	DB          string // the database the client would write: the worker's own, or declined
	Job         jobs.NewJob
	Follow      bool `json:",omitempty"` // keep the connection for the job's runs (Run)
	// Environ is the caller's environment (Run): the job carries what of
	// it the server's Env keeps, under the values of Job.Env, which the
	// caller gave explicitly and are always kept.
	Environ map[string]string `json:",omitempty"`
}

// Answer is the worker's one JSON line back, with the job as J: the
// worker writes a jobs.Job, and a client reads what of it it needs (Brief
// for the small queuectl, which prints three fields).
type Answer[J any] struct {
	Declined string `json:",omitempty"` // why, when the job was not stored
	Unknown  bool   `json:",omitempty"` // with Declined: the store failed, and the job may be stored
	Job      J
	Outcome  jobs.Outcome
}

// The fingerprints name the shape of what crosses the socket, so that a
// client and a worker of different builds never misread each other's jobs.
// A request that follows its job (Run) names the frames' types as well.
// A client sends the constant, which costs it nothing; the worker compares
// it with the fingerprint of its own types, reflected once, so a constant
// that no longer matches the types declines every client of its build
// (handoff's TestFingerprints says which value to write).
const (
	EnqueueFingerprint = "35f4af4de27d4bb"
	FollowFingerprint  = "e8ff2ee15acc6efe"
)

// Fingerprint is what a client sends.
func Fingerprint(follow bool) string {
	if follow {
		return FollowFingerprint
	}
	return EnqueueFingerprint
}

// MaxLine bounds a request: a job spec is at most 1 MiB (SPEC §6).
const MaxLine = 4 << 20

// The lines a following client may write back: CancelLine cancels the
// job; StopLine stops its running processes (SIGSTOP to the run's process
// group: Ctrl-Z of the client), and ContLine lets them go on (SIGCONT),
// as does a hang-up after StopLine.
const (
	CancelLine = "cancel\n"
	StopLine   = "stop\n"
	ContLine   = "cont\n"
)

// ClientLines names the lines a following client may write, for the
// follow's fingerprint: a worker that reads other lines declines clients
// that write these.
const ClientLines = CancelLine + StopLine + ContLine

// Event is a run of the followed job that started (Ended false) or ended,
// with the job as it was just after.
type Event struct {
	Job   jobs.Job
	Run   jobs.Run
	Ended bool
}

// Feed is where a follow writes a job's runs. Its methods are called from
// one goroutine.
type Feed struct {
	Stdout, Stderr io.Writer
	// Event tells of a run's start or end.
	Event func(Event)
	// Waiting tells that the job waits for a slot of its queue q.
	Waiting func(q jobs.Queue)
	// Paused tells that the job waits because its queue is paused (by
	// name, or with every queue).
	Paused func(queue string)
	// Stalled tells why the job cannot move for a while (Stall), or why
	// no longer when that changes.
	Stalled func(Stall)
}

// Stall is why a followed job cannot move for a while, though a worker
// serves its queue: it is held, scheduled past soon, or waits on a job
// that cannot move.
type Stall struct {
	Why  string // after "job ID ": "is held", "waits on a, which is held"
	Hint string // the command that moves it; "" when none
}

// Frame is one line from worker to client.
type Frame struct {
	Stdout   []byte      `json:",omitempty"`
	Stderr   []byte      `json:",omitempty"`
	Event    *Event      `json:",omitempty"`
	Waiting  *jobs.Queue `json:",omitempty"`
	Paused   string      `json:",omitempty"` // the job's queue, paused
	Stalled  *Stall      `json:",omitempty"`
	End      *jobs.Job   `json:",omitempty"` // the job, finished: the last frame
	Handover string      `json:",omitempty"` // why the worker stops following: the last frame
}
