//go:build unix

package preflight

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// findHoldersLsof finds what listens on a TCP port with lsof, then each
// holder's command line with ps: macOS's way (holder_darwin.go), which
// runs on any system with lsof (the tests run it on Linux). lsof run by a
// user sees that user's processes only. Unlike the /proc reading, it does
// not look for a socket that took the port without listening: -iTCP:port
// matches remote ports as well.
func findHoldersLsof(port int) ([]Holder, error) {
	lsof, err := exec.LookPath("lsof")
	if err != nil {
		lsof = "/usr/sbin/lsof"
	}
	out, err := output(lsof, "-nP", "-iTCP:"+strconv.Itoa(port), "-sTCP:LISTEN", "-Fpc")
	// Exit status 1 with nothing printed: nothing matched.
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1 && len(out) == 0) {
		return nil, fmt.Errorf("lsof: %w", err)
	}
	hs := ParseLsofF(out)
	if len(hs) > maxHolders {
		hs = hs[:maxHolders]
	}
	for i := range hs {
		if b, err := output("ps", "-ww", "-o", "command=", "-p", strconv.Itoa(hs[i].PID)); err == nil {
			if s := FormatCmdline([]byte(strings.TrimSpace(string(b)))); s != "" {
				hs[i].Command = s
			}
		}
	}
	return hs, nil
}

// maxHolders bounds the processes listed for one port (a forking server's
// workers all share its socket).
const maxHolders = 5
