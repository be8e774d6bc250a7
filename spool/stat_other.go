//go:build !linux

package spool

import (
	"io/fs"
	"time"
)

// changed returns when fi's file last changed. Off Linux the mtime stands
// in for the ctime: cp -p sets an old mtime only after the last write.
func changed(fi fs.FileInfo) time.Time { return fi.ModTime() }
