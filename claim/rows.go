package claim

import (
	"database/sql"
	"time"
)

// Rows is a result set an engine reads a row at a time: *sql.Rows and
// pgx.Rows both have these methods. Closing it stays with the caller,
// since the two drivers' Close methods differ.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Each calls fn for every row of rows in turn, and returns fn's first
// error, or else the error that ended rows. It does not close rows.
func Each(rows Rows, fn func(Scanner) error) error {
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Collect returns what scan reads from every row of rows, in order: nil
// when there is none. The error is scan's first, or the one that ended
// rows, as it came, for the caller to name its operation. It does not
// close rows.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	err := Each(rows, func(r Scanner) error {
		v, err := scan(r)
		if err == nil {
			out = append(out, v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Stream yields what scan reads from every row of rows, in order, until
// yield returns false, so that a listing of any size holds one row in
// memory. It does not yield an error: it returns scan's first, or the one
// that ended rows, for the caller to name its operation and yield. It
// does not close rows.
func Stream[T any](rows Rows, scan func(Scanner) (T, error), yield func(T, error) bool) error {
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return err
		}
		if !yield(v, nil) {
			return nil
		}
	}
	return rows.Err()
}

// ScanValue reads a row of one column.
func ScanValue[T any](row Scanner) (T, error) {
	var v T
	err := row.Scan(&v)
	return v, err
}

// The row shapes below are selected alike by both engines, so that the
// engines decode them one way. Integers go through int64, which both
// drivers scan whatever the column's integer type.

// ScanRunID reads a row of (job_id, attempt).
func ScanRunID(row Scanner) (RunID, error) {
	var id RunID
	err := row.Scan(&id.JobID, &id.Attempt)
	return id, err
}

// ScanBlocker reads a row of (dependency id, its state or "").
func ScanBlocker(row Scanner) (Blocker, error) {
	var b Blocker
	var st string
	err := row.Scan(&b.ID, &st)
	b.State = State(st)
	return b, err
}

// ScanEnded reads a row of (id, state) of a job that ended its dependents.
func ScanEnded(row Scanner) (EndDependentsParams, error) {
	var p EndDependentsParams
	var st string
	err := row.Scan(&p.ID, &st)
	p.State = State(st)
	return p, err
}

// QueueDue is the head of a queue's claim order among its due jobs: due
// since Since (zero: none is due).
type QueueDue struct {
	Queue string
	Since time.Time
}

// ScanQueueDue reads a row of (queue, run_after or NULL).
func ScanQueueDue(row Scanner) (QueueDue, error) {
	var d QueueDue
	var since sql.NullInt64
	err := row.Scan(&d.Queue, &since)
	if since.Valid {
		d.Since = time.Unix(0, since.Int64).UTC()
	}
	return d, err
}

// DueMap is what Engine.DueSince returns of rows of ScanQueueDue: the
// queues with a job due, and since when.
func DueMap(dues []QueueDue) map[string]time.Time {
	out := make(map[string]time.Time, len(dues))
	for _, d := range dues {
		if !d.Since.IsZero() {
			out[d.Queue] = d.Since
		}
	}
	return out
}

// ScanQueuePending reads a row of (queue, pending, scheduled, waiting).
func ScanQueuePending(row Scanner) (QueuePending, error) {
	var c QueuePending
	err := row.Scan(&c.Queue, &c.Pending, &c.Scheduled, &c.Waiting)
	return c, err
}

// ScanQueue reads a row of (queue, max_running, updated_at, running).
func ScanQueue(row Scanner) (Queue, error) {
	var q Queue
	var updated, running int64
	if err := row.Scan(&q.Name, &q.MaxRunning, &updated, &running); err != nil {
		return Queue{}, err
	}
	q.UpdatedAt, q.Running = time.Unix(0, updated).UTC(), int(running)
	return q, nil
}

// ScanMinuteRuns reads a row of (ended_at / time.Minute, outcome, count).
func ScanMinuteRuns(row Scanner) (MinuteRuns, error) {
	var m, n int64
	var r MinuteRuns
	if err := row.Scan(&m, &r.Outcome, &n); err != nil {
		return MinuteRuns{}, err
	}
	r.Minute, r.N = time.Unix(0, m*int64(time.Minute)).UTC(), int(n)
	return r, nil
}

// CollectCounts reads rows of (queue, state, count) into counts per queue
// and state.
func CollectCounts(rows Rows) (map[string]map[State]int, error) {
	out := map[string]map[State]int{}
	err := Each(rows, func(r Scanner) error {
		var queue, st string
		var n int64
		if err := r.Scan(&queue, &st, &n); err != nil {
			return err
		}
		if out[queue] == nil {
			out[queue] = map[State]int{}
		}
		out[queue][State(st)] = int(n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CollectStrings reads rows of two text columns into a map from the first
// to the second.
func CollectStrings(rows Rows) (map[string]string, error) {
	out := map[string]string{}
	err := Each(rows, func(r Scanner) error {
		var key, value string
		err := r.Scan(&key, &value)
		out[key] = value
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ScanRunRow is ScanRun as Collect takes it: a row of the run columns
// alone.
func ScanRunRow(row Scanner) (Run, error) { return ScanRun(row) }

// ScanRunTails reads a row of the run columns, then stdout_tail and
// stderr_tail.
func ScanRunTails(row Scanner) (Run, error) {
	var stdout, stderr []byte
	r, err := ScanRun(row, &stdout, &stderr)
	if err != nil {
		return Run{}, err
	}
	SetTailData(&r, stdout, stderr)
	return r, nil
}

// ScanInFlight reads a row of the run columns, then the job's lease_until.
func ScanInFlight(row Scanner) (InFlight, error) {
	var lease sql.NullInt64
	r, err := ScanRun(row, &lease)
	if err != nil {
		return InFlight{}, err
	}
	return InFlight{Run: r, LeaseUntil: FromNanos(lease)}, nil
}
