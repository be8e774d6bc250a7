package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/queuectl/queuectl/claim"
)

// Status is what `status` shows. The caller gathers it: Counts from
// claim.Store.Counts, SpoolWaiting and Rejected from the spool directory,
// Workers already filtered to the live ones (report cannot judge liveness).
type Status struct {
	Counts       map[claim.State]int
	SpoolWaiting int
	Rejected     int
	Workers      []claim.WorkerInfo
	// Busy is how many of the live workers' slots run a job now.
	Busy int
	// SpoolUnsafe says why the spool is refused and how to fix it; empty
	// when it is safe. No file is ingested while it is set.
	SpoolUnsafe string
	Queues      []claim.Queue                  // queues with settings (claim.Store.Queues)
	QueueCounts map[string]map[claim.State]int // claim.Store.QueueCounts, for JSON
	// Paused lists the paused queues (claim.Store.Paused); claim.AllQueues
	// when every queue is.
	Paused []string
	// PendingReasons counts the pending jobs that cannot run now, by
	// reason (claim.Store.PendingCounts).
	PendingReasons map[string]int
}

// StatusObject is the JSON shape of `status` (see the package comment).
type StatusObject struct {
	Pending    int `json:"pending"`
	Processing int `json:"processing"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Dead       int `json:"dead"`
	Canceled   int `json:"canceled"`
	Held       int `json:"held"`
	// PendingReasons has every reason of claim.PendingReasons, 0 or more.
	PendingReasons map[string]int `json:"pending_reasons"`
	Total          int            `json:"total"`
	SpoolWaiting   int            `json:"spool_waiting"`
	Rejected       int            `json:"rejected"`
	Active         int            `json:"active"`
	Busy           int            `json:"busy"`
	Workers        []WorkerObject `json:"workers"`
	SpoolUnsafe    string         `json:"spool_unsafe,omitempty"`
	Queues         []QueueObject  `json:"queues"`
	PausedQueues   []string       `json:"paused_queues"`
}

// WorkerObject is the JSON shape of one live worker process.
type WorkerObject struct {
	ID          string   `json:"id"`
	Host        string   `json:"host"`
	PID         int      `json:"pid"`
	Slots       int      `json:"slots"`
	Queues      []string `json:"queues"`
	StartedAt   string   `json:"started_at"`
	HeartbeatAt string   `json:"heartbeat_at"`
	Stopping    bool     `json:"stopping"`
}

// Status renders `status`: two-space indented `key: value` lines (states in
// claim.States order, then total, spool, rejected, paused, workers, active
// (live worker slots, every process) and busy (those running a job)), then
// one `queue NAME: running/limit` line per queue with settings, then, when
// workers run, a blank line and a table of them. JSON: one
// object, see the package comment.
func (p Printer) Status(s Status) error {
	if p.JSON {
		return WriteJSON(p.Out, StatusJSON(s))
	}
	var b strings.Builder
	for _, st := range claim.States {
		fmt.Fprintf(&b, "  %s: %d\n", st, s.Counts[st])
	}
	for _, r := range claim.PendingReasons {
		fmt.Fprintf(&b, "  pending %s: %d\n", r, s.PendingReasons[r])
	}
	fmt.Fprintf(&b, "  total: %d\n  spool: %d\n", total(s.Counts), s.SpoolWaiting)
	if s.SpoolUnsafe != "" {
		fmt.Fprintf(&b, "  spool unsafe: %s\n", s.SpoolUnsafe)
	}
	fmt.Fprintf(&b, "  rejected: %d\n", s.Rejected)
	fmt.Fprintf(&b, "  paused: %s\n", pausedWords(s.Paused))
	fmt.Fprintf(&b, "  workers: %d\n  active: %d\n  busy: %d\n", len(s.Workers), slots(s.Workers), s.Busy)
	for _, q := range s.Queues {
		fmt.Fprintf(&b, "  queue %s: %s\n", q.Name, running(q))
	}
	if _, err := io.WriteString(p.Out, b.String()); err != nil {
		return err
	}
	if len(s.Workers) == 0 {
		return nil
	}
	if _, err := io.WriteString(p.Out, "\n"); err != nil {
		return err
	}
	return p.workers(s.Workers)
}

// slots counts the slots of workers.
func slots(ws []claim.WorkerInfo) int {
	n := 0
	for _, w := range ws {
		n += w.Slots
	}
	return n
}

// total sums every state in Counts, also one this binary does not know,
// so the total never disagrees with the database.
func total(counts map[claim.State]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

func (p Printer) workers(ws []claim.WorkerInfo) error {
	rows := make([][]string, len(ws))
	for i, w := range ws {
		state := "running"
		if w.Stopping {
			state = "stopping"
		}
		queues := strings.Join(w.Queues, ",")
		if queues == "" {
			queues = "*" // no --queue: the worker serves every queue
		}
		rows[i] = []string{w.ID, state, strconv.Itoa(w.PID), w.Host, strconv.Itoa(w.Slots),
			queues, p.age(w.StartedAt), p.age(w.HeartbeatAt)}
	}
	return writeTable(p.Out, []string{"WORKER", "STATE", "PID", "HOST", "SLOTS", "QUEUES", "STARTED", "HEARTBEAT"}, rows)
}

// StatusJSON returns the JSON shape of `status`.
func StatusJSON(s Status) StatusObject {
	return StatusObject{
		Pending: s.Counts[claim.Pending], Processing: s.Counts[claim.Processing],
		Completed: s.Counts[claim.Completed], Failed: s.Counts[claim.Failed],
		Dead: s.Counts[claim.Dead], Canceled: s.Counts[claim.Canceled], Held: s.Counts[claim.Held],
		PendingReasons: pendingReasons(s.PendingReasons), Total: total(s.Counts),
		SpoolWaiting: s.SpoolWaiting, Rejected: s.Rejected, Active: slots(s.Workers), Busy: s.Busy,
		Workers: WorkersJSON(s.Workers), SpoolUnsafe: s.SpoolUnsafe, Queues: QueuesJSON(s.QueueCounts, s.Queues, s.Paused),
		PausedQueues: append([]string{}, s.Paused...),
	}
}

// pendingReasons is counts with every reason present.
func pendingReasons(counts map[string]int) map[string]int {
	out := make(map[string]int, len(claim.PendingReasons))
	for _, r := range claim.PendingReasons {
		out[r] = counts[r]
	}
	return out
}

// pausedWords is the text of the paused queues: "-" when none, "*" (every
// queue) first.
func pausedWords(paused []string) string {
	if len(paused) == 0 {
		return none
	}
	return strings.Join(paused, ",")
}

// WorkersJSON is the JSON shape of a list of workers; never nil.
func WorkersJSON(ws []claim.WorkerInfo) []WorkerObject {
	out := make([]WorkerObject, len(ws))
	for i, w := range ws {
		queues := w.Queues
		if queues == nil {
			queues = []string{}
		}
		out[i] = WorkerObject{ID: w.ID, Host: w.Host, PID: w.PID, Slots: w.Slots,
			Queues: queues, StartedAt: stamp(w.StartedAt), HeartbeatAt: stamp(w.HeartbeatAt),
			Stopping: w.Stopping}
	}
	return out
}
