package sqlite

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// unmarkedSharer reports whether another process has the database open
// without keeping its content mark: it holds SQLite's locks on the file
// (every connection in WAL mode holds a shared one) but not the keeper's
// flock that every queuectl process keeping the mark holds on it
// (connect). Such a process (a queuectl from before the mark, left
// running through an upgrade; the sqlite3 shell) checkpoints by itself,
// so the file's content changes under a mark nobody records. The kernel's
// lock table says who holds what, without opening the file (closing a
// descriptor of it would drop this process's own SQLite locks).
func (e *Engine) unmarkedSharer() bool {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false
	}
	defer f.Close()
	file := fmt.Sprintf("%02x:%02x:%d", unix.Major(e.id.Dev), unix.Minor(e.id.Dev), e.id.Ino)
	self := strconv.Itoa(os.Getpid())
	sqlite, keepers := map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 1: POSIX  ADVISORY  READ 16226 fe:00:10281213 1073741826 1073742335
		// a waiter's line has "->" after the number, and holds nothing.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" || fields[5] != file || fields[4] == self {
			continue
		}
		switch fields[1] {
		case "POSIX":
			sqlite[fields[4]] = true
		case "FLOCK":
			keepers[fields[4]] = true
		}
	}
	for pid := range sqlite {
		if !keepers[pid] {
			return true
		}
	}
	return false
}
