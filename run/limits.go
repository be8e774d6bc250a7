package run

import "fmt"

// overLimit is a job's limit above what this host lets its worker set: no
// attempt here can start, so the run is final (result.final).
type overLimit struct {
	what   string // the limit's key in "limits"
	n, max uint64
	source string // where max comes from
}

func (e *overLimit) Error() string {
	return fmt.Sprintf("limits.%s %d is above this host's maximum, %d (%s): lower it (the job's limits, or config limit-%s), or raise the host's, then queuectl dlq retry",
		e.what, e.n, e.max, e.source, e.what)
}
