//go:build !linux

package sqlite

// mountedReadOnly is false where statfs's flags are not read: the write
// onReadOnlyFS makes tells.
func mountedReadOnly(string) bool { return false }
