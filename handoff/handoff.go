// Package handoff passes `queuectl enqueue` from a command-line process to a
// running worker over a unix socket in the home, so that the command neither
// opens the database nor waits for fsyncs of its own. The worker commits
// whatever enqueues arrived together in one fsync'd transaction (group
// commit) and answers each with its job once that commit is on disk: an
// enqueue handed off is exactly as durable as one written by the command
// itself.
//
// Safety. The socket lives in the home, which every command refuses unless
// it is private to the user; the socket itself is made 0600; and both ends
// check the other's uid with SO_PEERCRED, so neither hands a job to, nor
// takes one from, another user. A worker serves only a client that names
// its own database, and only a client built from the same job types
// (fingerprint): anything else is declined and the client writes the store
// itself.
//
// Exactly once. A client falls back to the store only when the worker
// declined the job, or before anything was sent. When the connection breaks
// after the job was sent, the outcome is unknown: Enqueue returns
// ErrUnknown, and the caller looks the job up by its id (which the client
// picks when the user gave none), before it enqueues it itself.
package handoff

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"strings"
	"sync"

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

// request is one enqueue, one JSON line from client to worker.
type request struct {
	Fingerprint string
	DB          string // the database the client would write: the worker's own, or declined
	Job         jobs.NewJob
	Follow      bool `json:",omitempty"` // keep the connection for the job's runs (Run)
	// Environ is the caller's environment (Run): the job carries what of
	// it the server's Env keeps, under the values of Job.Env, which the
	// caller gave explicitly and are always kept.
	Environ map[string]string `json:",omitempty"`
}

// answer is the worker's one JSON line back, with the job as J: the
// worker writes a jobs.Job, and a client reads what of it it needs (Brief
// for the small queuectl, which prints three fields).
type answer[J any] struct {
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
// (TestFingerprints says which value to write).
const (
	enqueueFingerprint = "264b6fc2228a7912"
	followFingerprint  = "7dc542986b4e695d"
)

// fingerprint is what a client sends.
func fingerprint(follow bool) string {
	if follow {
		return followFingerprint
	}
	return enqueueFingerprint
}

// reflectedPrint is what a worker takes: the fingerprint of its own types.
func reflectedPrint(follow bool) string {
	if follow {
		return followPrint()
	}
	return enqueuePrint()
}

var (
	enqueuePrint = sync.OnceValue(func() string {
		return typesPrint(reflect.TypeFor[jobs.NewJob](), reflect.TypeFor[jobs.Job]())
	})
	followPrint = sync.OnceValue(func() string {
		return typesPrint(reflect.TypeFor[request](), reflect.TypeFor[jobs.Job](),
			reflect.TypeFor[jobs.Run](), reflect.TypeFor[jobs.Queue]())
	})
)

func typesPrint(types ...reflect.Type) string {
	var b strings.Builder
	for _, t := range types {
		describe(&b, t, 0)
	}
	h := fnv.New64a()
	h.Write([]byte(b.String()))
	return fmt.Sprintf("%x", h.Sum64())
}

func describe(b *strings.Builder, t reflect.Type, depth int) {
	b.WriteString(t.String())
	if t.Kind() != reflect.Struct || depth > 3 {
		return
	}
	b.WriteByte('{')
	for i := range t.NumField() {
		f := t.Field(i)
		b.WriteString(f.Name)
		b.WriteByte(' ')
		describe(b, f.Type, depth+1)
		b.WriteByte(';')
	}
	b.WriteByte('}')
}

// maxLine bounds a request: a job spec is at most 1 MiB (SPEC §6).
const maxLine = 4 << 20

func encode(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	return append(data, '\n'), err
}
