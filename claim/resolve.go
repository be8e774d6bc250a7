package claim

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// LastJob names the newest job (the last enqueued) wherever a job id is
// taken: `queuectl wait @last`. It cannot be an id (ids start with a letter
// or digit), and neither a shell nor make gives '@' a meaning there.
const LastJob = "@last"

// candidates bounds how many ids an ambiguous prefix's error lists, and
// countBound how far it counts the others: a prefix such as "2" (generated
// ids start with the date) may match every job, and counting a million
// would cost a tenth of a second.
const (
	candidates = 10
	countBound = 1000
)

// Resolve returns the id of the job ref names: the job whose id is ref, else
// the one job whose id starts with ref, or the newest job for LastJob. Each
// is one lookup of an index (the id's, or the enqueue order's), so it costs
// the same at a million jobs as at ten. Errors: ErrNotFound when no job
// matches (ref is no id, nor the start of one); ErrInvalid when several
// ids start with ref (the error lists the first ten, and says how many
// more match, up to countBound), or when ref is empty.
func (s *Store) Resolve(ctx context.Context, ref string) (string, error) {
	if ref == "" {
		// `queuectl wait "$id"` with id unset: "no such job: " would name
		// nothing.
		return "", invalidf("an empty job id: give an id, the start of one, or %s", LastJob)
	}
	if ref == LastJob {
		jobs, err := s.List(ctx, Filter{Newest: true, Limit: 1})
		if err != nil {
			return "", err
		}
		if len(jobs) == 0 {
			return "", fmt.Errorf("%w: %s (the store holds no job yet)", ErrNotFound, ref)
		}
		return jobs[0].ID, nil
	}
	if !ValidID(ref) {
		if strings.HasPrefix(ref, "@") { // a mistyped name of the newest job
			return "", unknownRef{NotFoundError(ref), ref}
		}
		return "", NotFoundError(ref) // as Get says of it: no id is such a string
	}
	j, err := s.Get(ctx, ref)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return j.ID, err
	}
	jobs, err := s.List(ctx, Filter{IDPrefix: ref, Limit: candidates + 1})
	if err != nil {
		return "", err
	}
	switch len(jobs) {
	case 0:
		return "", unknownRef{NotFoundError(ref), ref}
	case 1:
		return jobs[0].ID, nil
	}
	ids := make([]string, 0, len(jobs))
	for _, j := range jobs[:min(len(jobs), candidates)] {
		ids = append(ids, j.ID)
	}
	more := ""
	if len(jobs) > candidates {
		n, err := s.engine.CountIDPrefix(ctx, ref, countBound)
		if err != nil {
			return "", err
		}
		if n >= countBound {
			more = fmt.Sprintf(" and at least %d more", countBound-candidates)
		} else {
			// max: a job removed between the two reads is still listed.
			more = fmt.Sprintf(" and %d more", max(n, len(jobs))-candidates)
		}
	}
	return "", AmbiguousError{Ref: ref, error: invalidf("job id prefix %s is ambiguous: %s%s; type more of the id", ref, strings.Join(ids, " "), more)}
}

// AmbiguousError is the ErrInvalid of a job id prefix that several jobs'
// ids start with; Ref is the prefix.
type AmbiguousError struct {
	Ref string
	error
}

func (e AmbiguousError) Unwrap() error { return e.error }

// ResolveAll is Resolve of every ref, in order; it stops at the first error.
// A job named twice (by its id and a prefix of it, or by @last) is in the
// result once, where it was first named. The refs that are whole ids are
// found in one statement, and only the others one by one: `wait $(list
// -q)` names thousands of jobs.
func (s *Store) ResolveAll(ctx context.Context, refs []string) ([]string, error) {
	var whole []string
	for _, ref := range refs {
		if ValidID(ref) {
			whole = append(whole, ref)
		}
	}
	exact := map[string]bool{}
	if len(whole) > 1 {
		for j, err := range s.engine.GetAll(ctx, whole) {
			if err != nil {
				return nil, err
			}
			exact[j.ID] = true
		}
	}
	out := make([]string, 0, len(refs))
	seen := make(map[string]bool, len(refs))
	for _, ref := range refs {
		id := ref
		if !exact[ref] {
			var err error
			if id, err = s.Resolve(ctx, ref); err != nil {
				return nil, err
			}
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// unknownRef is a reference that names no job, with how jobs are named:
// someone who typed the distinctive end of a generated id finds it so.
type unknownRef struct {
	error
	ref string
}

func (e unknownRef) Unwrap() error { return e.error }

func (e unknownRef) Hint() string {
	if strings.HasPrefix(e.ref, "@") {
		return LastJob + " names the newest job"
	}
	return fmt.Sprintf("a job is named by its id or the start of it (generated ids start with the date); `queuectl list | grep %s` finds one by any part", e.ref)
}
