package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// What a killed test run leaves. `go test` kills a test binary that runs
// past its -timeout, and its cleanups do not run: the workers its tests
// started run on, and so do the PostgreSQL servers of its crash tests,
// taking CPU from every run after it on the machine. So a test binary that
// starts long-lived processes marks them (Own): its mark, in OwnerEnv, is
// in the environment of everything it starts and everything that starts
// in turn (a worker's jobs). The next such binary stops what carries the
// mark of a binary that is gone.

// OwnerEnv names the variable that carries a test binary's mark.
const OwnerEnv = "QUEUECTL_TEST_OWNER"

// Mark is this process's mark: its pid and its start time (clock ticks
// after boot), so that a pid used again by another process is not taken
// for it.
func Mark() string {
	return MarkOf(os.Getpid())
}

// MarkOf is process pid's mark, or "" when it is gone (or this system has
// no /proc).
func MarkOf(pid int) string {
	start, ok := startTime(pid)
	if !ok {
		return ""
	}
	return strconv.Itoa(pid) + ":" + start
}

// Gone reports whether the process that mark names has ended. A mark that
// does not parse (one being written, say) is not known to be gone, and
// neither is any where no process has a mark (no /proc).
func Gone(mark string) bool {
	pid, start, ok := strings.Cut(mark, ":")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 0 || start == "" || Mark() == "" {
		return false
	}
	return MarkOf(n) != mark
}

// Own stops every process of this user whose mark names a test binary
// that is gone, then marks what this process starts from now on with its
// own mark. It returns the processes it stopped. A test binary calls it
// once, before its tests run; nowhere but on Linux does it find anything.
func Own() []int {
	stopped := sweep(os.Getpid())
	os.Setenv(OwnerEnv, Mark())
	return stopped
}

// sweep kills, with SIGKILL, the processes of this user but self whose
// environment carries the mark of a process that is gone.
func sweep(self int) []int {
	entries, _ := os.ReadDir("/proc")
	var stopped []int
	prefix := []byte(OwnerEnv + "=")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		// Only this user's processes (and root's, as root) let their
		// environment be read.
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if mark, ok := bytes.CutPrefix(kv, prefix); ok {
				if Gone(string(mark)) && syscall.Kill(pid, syscall.SIGKILL) == nil {
					stopped = append(stopped, pid)
				}
				break
			}
		}
	}
	return stopped
}

// startTime reads field 22 of /proc/PID/stat, the process's start time.
func startTime(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields after it start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return "", false
	}
	return fields[19], true // field 22 of the line; 3 is fields[0]
}
