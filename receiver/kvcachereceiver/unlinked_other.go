//go:build !unix

package kvcachereceiver

import "os"

// unlinked: Windows does not let a file open for reading be deleted.
func unlinked(*os.File) bool { return false }
