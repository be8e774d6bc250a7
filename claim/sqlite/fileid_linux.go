package sqlite

import (
	"os"

	"golang.org/x/sys/unix"
)

// identify returns the identity of the open file f: device and inode, and
// its birth time where the file system keeps one (ext4, xfs, btrfs, tmpfs),
// so that a new file that reuses a deleted file's inode number is still
// another file.
func identify(f *os.File) (fileID, error) {
	var st unix.Statx_t
	raw, err := f.SyscallConn()
	if err != nil {
		return fileID{}, err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = unix.Statx(int(fd), "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_BTIME, &st)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fileID{}, &os.PathError{Op: "statx", Path: f.Name(), Err: err}
	}
	id := fileID{Dev: unix.Mkdev(st.Dev_major, st.Dev_minor), Ino: st.Ino}
	if st.Mask&unix.STATX_BTIME != 0 {
		id.Birth = st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
	}
	return id, nil
}
