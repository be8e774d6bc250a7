// Package claim is the queuectl store: the job domain (Job, State, Config,
// NewJob and its validation), the Store every other package holds, and the
// decisions about a job's life (its next state, its backoff, whether it is
// dead). No other package writes SQL.
//
// # Store and Engine
//
// Callers hold a *Store. Its methods decide, in Go and once for both
// engines, what a change of a job means; an Engine (engine.go) only
// persists those decisions, taking parameter structs, never SQL fragments.
// Two engines implement it, each in its own folder with all its SQL in
// embedded files and its migrations: claim/sqlite (one file, the default)
// and claim/postgres (many hosts). Open picks one from the location: a
// path, or a postgres:// URL.
//
// # Guarantees
//
// A job is claimed by at most one worker at a time, across goroutines,
// processes and hosts, because each engine claims in one statement that no
// other claim can interleave with (SQLite: an UPDATE … RETURNING inside
// BEGIN IMMEDIATE; PostgreSQL: FOR UPDATE SKIP LOCKED). A claim carries a
// lease the worker renews; a run whose worker is gone is recovered by
// Recover, and after MaxLost losses the job is dead. Every enqueue is
// durable (fsync'd) before it is acknowledged. DECISIONS.md gives the
// arguments, one section per guarantee.
//
// # Adding a store operation
//
// Add the method to Store (the domain decision), the operation it needs to
// the Engine interface, the operation to both engines, and a test to the
// conformance suite: a test in this package that runs through
// ForEachEngine runs once per engine, on SQLite and on the PostgreSQL
// server QUEUECTL_TEST_POSTGRES names.
package claim
