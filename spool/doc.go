// Package spool is queuectl's front door: job files dropped into a home's
// spool/ directory become jobs in the claim store. It owns the three
// directories of a home that hold job files — spool/, rejected/ and dead/ —
// and every file in them.
//
// # Taking a file
//
// Any number of ingesters (the watcher of every `worker start`, `watch`,
// `ingest`) may share one spool. Each holds a private directory
// spool/.ingesting/<pid>-<random>/, locked with flock(2) for as long as it
// lives. A file is taken by one rename(2) into that directory under the name
// <key>.<original name>, where key is made at that moment from the time and
// 64 random bits: rename is atomic, so of several ingesters exactly one
// takes each file.
// The key travels with the file and is stored as the job's ingest key
// (claim.NewJob.IngestKey, UNIQUE in the database).
//
// A taken batch is then parsed, committed in one transaction
// (claim.Store.EnqueueEach, fsync'd), and only then unlinked; a pass takes
// the next batch while it commits this one, and commits in the order it
// took. Why a SIGKILL
// at any instant loses nothing and ingests nothing twice:
//
//   - before the rename, the file is still in spool/ and nothing happened;
//   - between rename and commit, the file sits in a directory whose flock
//     died with its owner; the next pass of any ingester sees the lock free,
//     moves the file into its own directory under the same name and ingests
//     it: no job existed, so one is created;
//   - between commit and unlink, the same recovery happens, but the key is
//     in the database already, so Enqueue answers Duplicate and the file is
//     just removed;
//   - after the unlink, there is nothing left to do.
//
// The flock, not a pid, tells a live ingester from a dead one: the kernel
// drops it when the process dies however it dies, and a recycled pid cannot
// fake it. Directory renames are fsync'd before the commit, so even a power
// loss cannot bring a file back under its original name (and a fresh key)
// after its job was committed.
//
// # What is waited for, what is rejected
//
// Only top-level *.json names are candidates; names starting with "." or
// ending in ".tmp" are left alone, so writers can write x.json.tmp and
// rename it. A file that is not yet a complete JSON value is left in place
// until it has not changed for Settle, because `cp` is not atomic; it is
// never taken while incomplete, so writers that append by name are safe.
// A file whose JSON goes wrong before its end (an invalid character, data
// after the value) is not waited for: no bytes appended could mend it.
// Everything that cannot become a job — bad JSON or fields, over 1 MiB, not a
// regular file, owned by another user, an id that exists — is moved to
// rejected/ beside a <name>.reason file that says what is wrong and how to
// fix it. Nothing is deleted unless its job is committed.
//
// # dead/
//
// dead/<id>.json is written atomically for every dead job (WriteDead): the
// job spec, valid to drop back into spool/ to re-drive the job, plus a
// "dead" object; the file's time is the job's updated_at. SyncDead makes
// dead/ agree with the database again after a crash, and, on a store other
// hosts share, while a worker runs (jobs die and are re-driven on other
// hosts too); it writes again the file of a dead job changed since (a
// dependent a re-drive leaves dead, whose error then says why).
package spool
