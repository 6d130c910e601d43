//go:build !unix

package mlxsim

import "os"

// Abort ends the process with the status a SIGABRT death maps to.
func Abort() { os.Exit(134) }
