package preflight

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Holder is a process that holds a port.
type Holder struct {
	// PID is 0 when the socket was seen but not its process (another
	// user's, where this one may not read /proc/<pid>/fd).
	PID int
	// Command is its command line, or its name when only that is known.
	Command string
	// UID owns the socket; -1 when unknown.
	UID int
	// Listening is false for a socket that took the port for something
	// else, an outgoing connection's local port.
	Listening bool
}

func (h Holder) String() string {
	var s string
	switch {
	case h.PID > 0 && h.Command != "":
		s = fmt.Sprintf("pid %d (%s)", h.PID, h.Command)
	case h.PID > 0:
		s = fmt.Sprintf("pid %d", h.PID)
	case h.UID >= 0:
		s = fmt.Sprintf("a process of uid %d (its pid is not readable by this user)", h.UID)
	default:
		s = "a process whose pid is not readable by this user"
	}
	if !h.Listening {
		s += ", as the local port of a connection"
	}
	return s
}

// describeHolders is what a message says of the holders of a port.
func describeHolders(hs []Holder, err error, port int) string {
	if err != nil {
		return fmt.Sprintf("what holds it could not be read: %v", err)
	}
	if len(hs) == 0 {
		return "no process holding it is visible from here" + noHolderHint(port)
	}
	parts := make([]string, 0, len(hs))
	for _, h := range hs {
		parts = append(parts, h.String())
	}
	return "held by " + strings.Join(parts, "; ")
}

// commandTimeout bounds each command run to find a holder (lsof, ps).
const commandTimeout = 2 * time.Second

// output runs a command with commandTimeout and returns its stdout.
func output(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = commandTimeout
	return cmd.Output()
}
