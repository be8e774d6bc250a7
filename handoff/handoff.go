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
//
// The protocol and the client's end are package wire, which links no net;
// this package is the worker's end (Server), and names the client's for
// the full program.
package handoff

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"strings"
	"sync"

	"github.com/queuectl/queuectl/claim/jobs"
	"github.com/queuectl/queuectl/handoff/wire"
)

// SocketName is the socket's file name in the home.
const SocketName = wire.SocketName

// The client's errors (package wire).
var (
	ErrDeclined = wire.ErrDeclined
	ErrUnknown  = wire.ErrUnknown
	ErrHandover = wire.ErrHandover
)

type (
	// Event is a run of a followed job that started or ended.
	Event = wire.Event
	// Feed is where a Server's Follow writes a job's runs. Its methods are
	// called from the one goroutine that runs Follow.
	Feed = wire.Feed
	// Stream is a job handed over with Run: its runs come back on it.
	Stream = wire.Stream
	// Brief is what the small queuectl prints of a job it enqueued.
	Brief = wire.Brief
	// Stall is why a followed job cannot move for a while.
	Stall = wire.Stall

	request       = wire.Request
	answer[J any] = wire.Answer[J]
	frame         = wire.Frame
)

// Enqueue hands nj to the worker serving the socket at path (wire.Enqueue).
func Enqueue(path, db string, nj jobs.NewJob) (jobs.Result, error) { return wire.Enqueue(path, db, nj) }

// Run hands nj over and follows it (wire.Run).
func Run(path, db string, nj jobs.NewJob, environ map[string]string) (*Stream, error) {
	return wire.Run(path, db, nj, environ)
}

// The fingerprints a client sends (wire) and a worker compares with those
// of its own types, reflected once (with the lines a follow's client writes): a client of another build is declined.
// A stale constant declines its own build's clients (TestFingerprints).
const (
	enqueueFingerprint = wire.EnqueueFingerprint
	followFingerprint  = wire.FollowFingerprint
)

func fingerprint(follow bool) string { return wire.Fingerprint(follow) }

// reflectedPrint is what a worker takes: the fingerprint of its own types.
func reflectedPrint(follow bool) string {
	if follow {
		return followPrint()
	}
	return enqueuePrint()
}

var (
	enqueuePrint = sync.OnceValue(func() string {
		return typesPrint("", reflect.TypeFor[jobs.NewJob](), reflect.TypeFor[jobs.Job]())
	})
	// A follow's names the lines its client writes back too.
	followPrint = sync.OnceValue(func() string {
		return typesPrint(wire.ClientLines, reflect.TypeFor[request](), reflect.TypeFor[jobs.Job](),
			reflect.TypeFor[jobs.Run](), reflect.TypeFor[jobs.Queue](), reflect.TypeFor[frame]())
	})
)

// typesPrint hashes the shape of types, and the lines of a protocol.
func typesPrint(lines string, types ...reflect.Type) string {
	var b strings.Builder
	b.WriteString(lines)
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

const maxLine = wire.MaxLine

func encode(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	return append(data, '\n'), err
}
