//go:build !linux && !darwin

package preflight

import "errors"

// findHolders does not know how to find a port's holder on this system.
func findHolders(int) ([]Holder, error) {
	return nil, errors.New("not supported on this system")
}

func noHolderHint(int) string { return "" }
