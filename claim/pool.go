package claim

import (
	"net/url"
	"strconv"
)

// WorkerConnections is how many connections to a PostgreSQL server a
// worker of slots slots holds at most: its pool (WorkerPool) and its one
// listening connection (LISTEN, for wake-ups).
func WorkerConnections(slots int) int { return WorkerPool(slots) + 1 }

// WorkerPool is the pool size of a worker of slots slots: 1 + slots/4, at
// most 8. The slots' claims and completions go through one group-commit
// transaction at a time, so a pool of one connection serves a few slots;
// the rest (heartbeat, a run's start, the reaper, ingestion) are short.
func WorkerPool(slots int) int { return min(1+max(slots, 0)/4, 8) }

// ForWorker returns location for a worker of slots slots: a PostgreSQL
// URL without pool_max_conns gets WorkerPool(slots). Other locations, and
// a URL that sets its own pool size, come back as they are.
func ForWorker(location string, slots int) string {
	if EngineFor(location) != EnginePostgres {
		return location
	}
	u, err := url.Parse(location)
	if err != nil || u.Query().Has("pool_max_conns") {
		return location // Open reports a URL it cannot read
	}
	q := u.Query()
	q.Set("pool_max_conns", strconv.Itoa(WorkerPool(slots)))
	u.RawQuery = q.Encode()
	return u.String()
}
