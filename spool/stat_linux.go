package spool

import (
	"io/fs"
	"syscall"
	"time"
)

// changed returns when fi's file last changed, content or metadata. The
// ctime is used because, unlike the mtime, no writer can set it back (cp -p
// and tar restore old mtimes).
func changed(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Unix())
	}
	return fi.ModTime()
}
