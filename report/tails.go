package report

import (
	"fmt"
	"strings"

	"github.com/queuectl/queuectl/claim"
)

// A run's log files stay on the host that ran it; the store keeps the last
// claim.TailBytes of each stream with the run (SPEC §9). `show` names the
// files of another host's runs as host:path, and prints what was kept where
// the file cannot be read (Printer.Host, Printer.FromTail).

// logPath is path as show names it: host:path for a run of another host.
func (p Printer) logPath(r claim.Run, path string) string {
	if path == "" || p.Host == "" || r.Host == p.Host {
		return path
	}
	return r.HostName() + ":" + path
}

// Bytes is a size for people: "512 bytes", "1.5 KiB", "64 KiB", "3.2 MiB".
func Bytes(n int64) string {
	switch {
	case n < 1<<10:
		if n == 1 {
			return "1 byte"
		}
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<10))) + " KiB"
	case n < 1<<30:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<20))) + " MiB"
	}
	return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<30))) + " GiB"
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// KeptText says what a tail holds, for the line above it and for logs'
// note: "the last 64 KiB of 200 KiB" or "all 1.2 KiB".
func KeptText(t claim.Tail) string {
	if t.Truncated() {
		return fmt.Sprintf("the last %s of %s", Bytes(int64(len(t.Data))), Bytes(t.Size))
	}
	return "all " + Bytes(t.Size)
}

// keptTails writes, for the latest run, each stream that is read from its
// tail (FromTail) and printed anything: a line naming what it is and where
// the full file is, then the tail itself.
func (p Printer) keptTails(b *strings.Builder, runs []claim.Run) {
	if p.FromTail == nil || len(runs) == 0 {
		return
	}
	r := runs[len(runs)-1]
	if r.Tails == nil {
		return
	}
	for _, s := range []struct {
		name string
		tail claim.Tail
		path string
		err  bool
	}{{"stdout", r.Tails.Stdout, r.StdoutPath, false}, {"stderr", r.Tails.Stderr, r.StderrPath, true}} {
		if s.tail.Size == 0 || !p.FromTail(r, s.err) {
			continue
		}
		whole := "the full log: " + r.HostName() + ":" + s.path
		if p.Host != "" && r.Host == p.Host {
			whole = "its log file " + s.path + " is gone"
		}
		fmt.Fprintf(b, "\n%s of run %d, %s kept with the run (%s):\n", s.name, r.Attempt, KeptText(s.tail), whole)
		b.Write(s.tail.Data)
		if !strings.HasSuffix(string(s.tail.Data), "\n") {
			b.WriteString("\n")
		}
	}
}

// tailFields adds what the store kept of r's streams to o: sizes and
// truncation always (when kept), and, for a stream read from its tail
// (FromTail), the text and where the full file is.
func (p Printer) tailFields(o *RunObject, r claim.Run) {
	if r.Tails == nil {
		return
	}
	o.StdoutSize, o.StderrSize = &r.Tails.Stdout.Size, &r.Tails.Stderr.Size
	outCut, errCut := r.Tails.Stdout.Truncated(), r.Tails.Stderr.Truncated()
	o.StdoutTruncated, o.StderrTruncated = &outCut, &errCut
	if p.FromTail == nil {
		return
	}
	if p.FromTail(r, false) {
		text := string(r.Tails.Stdout.Data)
		o.StdoutTail, o.StdoutFile = &text, r.HostName()+":"+r.StdoutPath
	}
	if p.FromTail(r, true) {
		text := string(r.Tails.Stderr.Data)
		o.StderrTail, o.StderrFile = &text, r.HostName()+":"+r.StderrPath
	}
}
