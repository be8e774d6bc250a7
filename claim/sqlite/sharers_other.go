//go:build !linux

package sqlite

// unmarkedSharer reports whether another process has the database open
// without keeping its content mark. Only Linux says who holds a file's
// locks (/proc/locks); elsewhere every process is taken to keep it.
func (e *Engine) unmarkedSharer() bool { return false }
