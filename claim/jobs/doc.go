// Package jobs is what a job is, without a store: the job as asked for
// (NewJob) and as stored (Job, Run, State), the job spec of SPEC §3 and
// its validation, job ids, and the outcomes of an enqueue. Package claim
// names each of these as its own (claim.Job is jobs.Job), and every
// program but the small `queuectl` in front (package front) uses them
// through claim; the front imports this package alone, so that it links
// no store, no engine registry and nothing they import.
package jobs
