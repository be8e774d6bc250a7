package claim

// WorkerConnections is how many connections to a PostgreSQL server a
// worker of slots slots holds at most: its pool (WorkerPool) and its one
// listening connection (LISTEN, for wake-ups).
func WorkerConnections(slots int) int { return WorkerPool(slots) + 1 }

// WorkerPool is the pool size of a worker of slots slots: 1 + slots/4, at
// most 8. The slots' claims and completions go through one group-commit
// transaction at a time, so a pool of one connection serves a few slots;
// the rest (heartbeat, a run's start, the reaper, ingestion) are short.
func WorkerPool(slots int) int { return min(1+max(slots, 0)/4, 8) }

// ForWorker returns the options with which a worker of slots slots opens
// its store: a PostgreSQL pool of WorkerPool(slots), unless the URL sets
// its own pool_max_conns. They are kept apart from the location, which
// messages show as the user gave it, without a parameter the user never
// typed.
func ForWorker(slots int) OpenOptions { return OpenOptions{MaxConns: WorkerPool(slots)} }
