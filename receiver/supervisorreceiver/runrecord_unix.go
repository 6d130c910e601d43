//go:build unix

package supervisorreceiver

import (
	"fmt"
	"os"
	"syscall"
)

// openRecord opens a run record without following a symlink and without
// blocking on a FIFO, and checks what it opened (not the name, which could
// be swapped between a check and the open): a regular file of this user,
// with no group or other permission bits.
func openRecord(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if err == syscall.ELOOP {
			return nil, fmt.Errorf("%s: is a symbolic link, not a run record", path)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := ownedAlone(path, &st, syscall.S_IFREG, 0o077); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkRecordDir refuses a directory someone else could plant a record in
// or swap one out of: not ours, or writable by group or others.
func checkRecordDir(dir string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	return ownedAlone(dir, &st, syscall.S_IFDIR, 0o022)
}

// ownedAlone checks st is of kind, owned by the effective user, with none
// of the bits in forbidden.
func ownedAlone(path string, st *syscall.Stat_t, kind uint32, forbidden uint32) error {
	if uint32(st.Mode)&syscall.S_IFMT != kind {
		what := "a regular file"
		if kind == syscall.S_IFDIR {
			what = "a directory"
		}
		return fmt.Errorf("%s: not %s, not trusted as the run record's", path, what)
	}
	if uid := uint32(os.Geteuid()); st.Uid != uid {
		return fmt.Errorf("%s: owned by uid %d, not by this collector's uid %d: not trusted as the run record's", path, st.Uid, uid)
	}
	if m := uint32(st.Mode) & 0o777; m&forbidden != 0 {
		return fmt.Errorf("%s: mode %#o lets group or others change it: not trusted as the run record's (chmod go-w, or 0600 for the file)", path, m)
	}
	return nil
}
