//go:build unix

package kvcachereceiver

import (
	"os"
	"syscall"
)

// unlinked says whether the file held has no name left: deleted, not
// renamed away (a rotated file keeps its new name, and its writer may
// still add to it).
func unlinked(f *os.File) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && sys.Nlink == 0
}
