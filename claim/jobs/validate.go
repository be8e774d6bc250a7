package jobs

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxArgLen is the longest string Linux passes as one argument or one
// environment entry of a new program: MAX_ARG_STRLEN (32 pages, 131072
// bytes) less the terminating NUL. A job's command is one argument of its
// shell, so a longer one fails every run with "argument list too long".
const MaxArgLen = 131071

// MaxLabel bounds a job's label, in bytes: a label is a word or a few,
// shown in a column of `list`.
const MaxLabel = 200

// MaxDuration bounds durations so that adding them to a time cannot overflow.
const MaxDuration = 100 * 365 * 24 * time.Hour

// MaxRetriesMost is the most runs a job may have, in a spec, a flag or
// config max-retries.
const MaxRetriesMost = 1000

// MaxExecTotal bounds a job's command and env together: what exec takes
// for arguments and environment (ARG_MAX, 2 MiB under the usual 8 MiB
// stack limit) less 256 KiB for the worker's environment, which the job's
// is merged over.
const MaxExecTotal = 2<<20 - 256<<10

// Validate checks a NewJob the way ParseSpec does, for jobs built from flags.
// The first problem found is the one reported, in this order.
func (nj *NewJob) Validate() error {
	checks := []func() error{nj.validateCommand, nj.validateFields, nj.validateAfter, nj.validateHooks,
		nj.Limits.validate, nj.validateEnv}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateCommand refuses a command no shell could run, or no exec start.
func (nj *NewJob) validateCommand() error {
	switch {
	case strings.TrimSpace(nj.Command) == "":
		return invalidf("the command is empty; give the shell command to run")
	case strings.ContainsRune(nj.Command, 0):
		return invalidf("the command contains a NUL byte, which no shell can run")
	case len(nj.Command) > MaxArgLen:
		return invalidf("the command is %d bytes: a job's command reaches /bin/sh -c as one argument, of at most %d "+
			"bytes on Linux (MAX_ARG_STRLEN), so it could never start (`run -- CMD ARGS` joins its words into one): "+
			"put it in a script file and run that, or the long list in a file (xargs)", len(nj.Command), MaxArgLen)
	}
	return nil
}

// validateFields checks the fields of one value: id, retries, backoff,
// timing, cwd, umask, queue, unique key and label.
func (nj *NewJob) validateFields() error {
	switch {
	case nj.ID != "" && !ValidID(nj.ID):
		return invalidf("id %s is not valid: %s", shortQuote(nj.ID), NameRule)
	case nj.MaxRetries != nil && (*nj.MaxRetries < 1 || *nj.MaxRetries > MaxRetriesMost):
		return invalidf("max_retries is %d; it counts runs, so give 1 to %d (as config max-retries takes)", *nj.MaxRetries, MaxRetriesMost)
	case nj.BackoffBase != nil && (*nj.BackoffBase < 1 || *nj.BackoffBase > 3600):
		return invalidf("backoff_base is %d; give whole seconds from 1 to 3600", *nj.BackoffBase)
	case !nj.RunAt.IsZero() && nj.Delay != 0:
		return invalidf("both run_at and delay are set; give one of them")
	case nj.Delay > MaxDuration || (nj.Timeout != nil && *nj.Timeout > MaxDuration):
		return invalidf("a duration is over 100 years; give a shorter one")
	case nj.Cwd != "" && !filepath.IsAbs(nj.Cwd):
		return invalidf("cwd %s is not an absolute path; give one starting with /", shortQuote(nj.Cwd))
	case nj.Umask != nil && (*nj.Umask < 0 || *nj.Umask > 0o777):
		return invalidf("umask %o is not a file mode creation mask; give 0 to 0777", *nj.Umask)
	case nj.Queue != "" && !ValidID(nj.Queue):
		return invalidf("queue %s is not valid: %s", shortQuote(nj.Queue), NameRule)
	case strings.ContainsRune(nj.UniqueKey, 0) || strings.ContainsRune(nj.Cwd, 0):
		return invalidf("unique_key and cwd must not contain NUL bytes")
	case len(nj.Label) > MaxLabel || strings.ContainsFunc(nj.Label, unicode.IsControl):
		return invalidf("label %s is not valid: give up to %d characters, no control characters", shortQuote(nj.Label), MaxLabel)
	}
	return nil
}

// validateAfter refuses a dependency that is no job id, or the job itself.
func (nj *NewJob) validateAfter() error {
	for _, id := range nj.After {
		if !ValidID(id) {
			return invalidf("after: %q is not a job id", id)
		}
		if id == nj.ID {
			return invalidf("after: job %s cannot wait for itself", id)
		}
	}
	return nil
}

// validateHooks refuses a hook command no shell could run.
func (nj *NewJob) validateHooks() error {
	for _, h := range []string{nj.Hooks.OnSuccess, nj.Hooks.OnFailure, nj.Hooks.OnDead} {
		if strings.ContainsRune(h, 0) {
			return invalidf("a hook contains a NUL byte, which no shell can run")
		}
	}
	return nil
}

// validateEnv refuses an env that no exec could take: a bad name, a NUL
// in a value, an entry over MAX_ARG_STRLEN, or entries that together with
// the command pass MaxExecTotal.
func (nj *NewJob) validateEnv() error {
	total := execSize("/bin/sh") + execSize("-c") + execSize(nj.Command)
	for k, v := range nj.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return invalidf("env name %q is not valid: names are non-empty, without '=' or NUL", k)
		}
		if strings.ContainsRune(v, 0) {
			return invalidf("env %s's value contains a NUL byte, which no program's environment can hold", k)
		}
		if n := len(k) + 1 + len(v); n > MaxArgLen {
			return invalidf("env entry %q is %d bytes as NAME=value; the system passes at most %d bytes as one "+
				"environment string (Linux MAX_ARG_STRLEN): pass it in a file", k, n, MaxArgLen)
		}
		total += execSize(k) + 1 + len(v)
	}
	if total > MaxExecTotal {
		return invalidf("the command and env entries are %d bytes together; a program is started with at most "+
			"about %d (Linux ARG_MAX, less room for the worker's own environment), so it could never start: "+
			"pass the large values in a file", total, MaxExecTotal)
	}
	return nil
}

// execSize is what one argument or environment string costs exec: its
// bytes, the NUL after them, and the pointer to them.
func execSize(s string) int { return len(s) + 1 + 8 }

// shortQuote quotes a refused value for its message: whole when short, else
// its start and how long it is, so that a refusal of a value far over a
// bound does not repeat all of it.
func shortQuote(v string) string {
	const most = 64
	if len(v) <= most {
		return strconv.Quote(v)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(v[:cut]), len(v))
}
