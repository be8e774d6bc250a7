package front

import (
	"iter"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/queuectl/queuectl/claim/jobs"
)

// call is a command line the front serves: only the plainest forms of
// enqueue and run. Anything else (another flag, a repeated one, a flag
// after the command's words, --help) is the full program's.
type call struct {
	args     []string
	home, db string
	name     string // enqueue or run
	quiet    bool
	queue    string
	label    string   // run --label
	command  *string  // enqueue --command, run --shell
	spec     string   // enqueue's JSON argument
	file     string   // enqueue -f: a regular file of one job
	words    []string // run's words after --
}

// parse reads args as the full program would, and reports whether the
// front may serve them.
func parse(args []string) (call, bool) {
	c := call{args: args}
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return c, false // completion is the full program's
	}
	rest := args[1:]
	seen := map[string]bool{}
	value := func(name string) (string, bool) {
		if seen[name] {
			return "", false // the full program says what a repeated flag means
		}
		seen[name] = true
		arg := rest[0]
		if v, ok := strings.CutPrefix(arg, "--"+name+"="); ok {
			rest = rest[1:]
			return v, true
		}
		if len(rest) < 2 {
			return "", false
		}
		v := rest[1]
		rest = rest[2:]
		return v, true
	}
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		var ok bool
		switch name := flagName(rest[0]); name {
		case "home": // empty: the full program refuses it
			c.home, ok = value(name)
			ok = ok && c.home != ""
		case "db":
			c.db, ok = value(name)
			ok = ok && c.db != ""
		}
		if !ok {
			return c, false
		}
	}
	if len(rest) == 0 || (rest[0] != "enqueue" && rest[0] != "run") {
		return c, false
	}
	c.name, rest = rest[0], rest[1:]
	for len(rest) > 0 && rest[0] != "--" && strings.HasPrefix(rest[0], "-") {
		ok := true
		switch name := flagName(rest[0]); {
		case (rest[0] == "-q" || rest[0] == "--quiet") && !seen["quiet"]:
			c.quiet, seen["quiet"], rest = true, true, rest[1:]
		case name == "queue":
			c.queue, ok = value(name)
		case c.name == "enqueue" && (name == "command" || rest[0] == "-c"):
			var v string
			v, ok = value("command")
			c.command = &v
		case c.name == "enqueue" && (name == "file" || rest[0] == "-f"):
			c.file, ok = value("file")
		case c.name == "run" && name == "label":
			c.label, ok = value(name)
		case c.name == "run" && name == "shell":
			var v string
			v, ok = value(name)
			c.command = &v
		default:
			ok = false
		}
		if !ok {
			return c, false
		}
	}
	if c.name == "run" {
		if len(rest) > 0 && rest[0] == "--" {
			c.words = rest[1:]
		} else if len(rest) > 0 {
			return c, false
		}
		// An empty first word is the full program's to refuse.
		return c, (c.command == nil) != (len(c.words) == 0) && (len(c.words) == 0 || c.words[0] != "")
	}
	if seen["file"] {
		return c, len(rest) == 0 && c.command == nil && !seen["queue"]
	}
	switch {
	case len(rest) == 0:
		return c, c.command != nil
	case len(rest) > 1 || c.command != nil || c.queue != "" || seen["queue"]:
		return c, false
	}
	c.spec = rest[0]
	return c, strings.HasPrefix(strings.TrimSpace(c.spec), "{")
}

// flagName is the name of a --name or --name=value argument; "" for any
// other form.
func flagName(arg string) string {
	name, ok := strings.CutPrefix(arg, "--")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	return name
}

// job makes the call's job as the full program makes it; ok is false when
// the full program must say what is wrong with it.
func (c *call) job() (jobs.NewJob, bool) {
	var nj jobs.NewJob
	var err error
	switch {
	case c.file != "":
		return fileJob(c.file)
	case c.spec != "":
		nj, err = jobs.ParseSpec([]byte(c.spec))
		return nj, err == nil
	case c.name == "enqueue":
		nj = jobs.NewJob{Command: *c.command, Queue: c.queue}
		return nj, nj.Validate() == nil
	}
	command := ShellQuote(c.words)
	if c.command != nil {
		command = *c.command
	}
	one, mask := 1, Umask()
	nj = jobs.NewJob{Command: command, Queue: c.queue, MaxRetries: &one, Label: c.label, Umask: &mask}
	if nj.Cwd, err = os.Getwd(); err != nil {
		return nj, false
	}
	return nj, nj.Validate() == nil
}

// ShellQuote joins words into one /bin/sh command line that runs them as
// they are: each word is single-quoted unless it is made of characters no
// shell treats specially. Bytes that are not UTF-8 (a file name in
// Latin-1) are written as printf's octal escapes, 'caf'"$(printf '\351')":
// the command is text then, which JSON (the worker's socket, the spool,
// every view) and PostgreSQL keep as it is, where they would turn such a
// byte into U+FFFD and the job would be given another word.
func ShellQuote(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
			b.WriteString(w)
			continue
		}
		b.WriteByte('\'')
		for j := 0; j < len(w); {
			if notUTF8(w[j:]) {
				b.WriteString(`'"$(printf '`)
				for ; j < len(w) && notUTF8(w[j:]); j++ {
					c := w[j] // 0x80 or more: three octal digits
					b.Write([]byte{'\\', '0' + c>>6, '0' + c>>3&7, '0' + c&7})
				}
				b.WriteString(`')"'`)
				continue
			}
			_, size := utf8.DecodeRuneInString(w[j:])
			if w[j] == '\'' {
				b.WriteString(`'\''`)
			} else {
				b.WriteString(w[j : j+size])
			}
			j += size
		}
		b.WriteByte('\'')
	}
	return b.String()
}

// notUTF8 reports whether s begins with a byte that is not UTF-8.
func notUTF8(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	return r == utf8.RuneError && size == 1
}

// RunEnv is what of environ (KEY=VALUE entries) a run's job may carry:
// all but queuectl's own job variables, the caller's home and store, and
// entries that cannot be passed. Where the queue is belongs to the worker,
// which gives the job its own home (QUEUECTL_HOME) and its own
// environment's QUEUECTL_DB; the caller's would be stored with the job,
// a PostgreSQL URL's password with it.
func RunEnv(environ []string) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if k != "" && carried(k) && !strings.ContainsRune(kv, 0) {
			env[k] = v
		}
	}
	return env
}

// carried reports whether RunEnv keeps variable k.
func carried(k string) bool {
	switch k {
	case "QUEUECTL_JOB_ID", "QUEUECTL_ATTEMPT", "QUEUECTL_HOME", "QUEUECTL_DB", "QUEUECTL_DB_PATH":
		return false
	}
	return true
}

// fileJob reads the job of enqueue -f when the file is a regular file
// that holds exactly one: the full program reads a stream of more (or a
// pipe, which only one reader may read) itself.
func fileJob(name string) (jobs.NewJob, bool) {
	f, err := os.Open(name)
	if err != nil {
		return jobs.NewJob{}, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return jobs.NewJob{}, false
	}
	next, stop := iter.Pull2(jobs.ParseStream(f))
	defer stop()
	nj, err, ok := next()
	if err != nil || !ok {
		return jobs.NewJob{}, false
	}
	if _, err, more := next(); err != nil || more {
		return jobs.NewJob{}, false
	}
	return nj, true
}
