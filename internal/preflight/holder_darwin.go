//go:build darwin

package preflight

import "fmt"

// findHolders finds what holds a TCP port on macOS: lsof and ps.
func findHolders(port int) ([]Holder, error) {
	return findHoldersLsof(port)
}

// noHolderHint says why no holder may be visible: lsof sees only this
// user's processes.
func noHolderHint(port int) string {
	return fmt.Sprintf(" (lsof sees this user's processes only: sudo lsof -nP -iTCP:%d -sTCP:LISTEN shows the others)", port)
}
