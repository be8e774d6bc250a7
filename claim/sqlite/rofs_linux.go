package sqlite

import "golang.org/x/sys/unix"

// mountedReadOnly reports whether the file system holding dir is mounted
// read-only, as statfs(2) says.
func mountedReadOnly(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Flags&unix.ST_RDONLY != 0
}
