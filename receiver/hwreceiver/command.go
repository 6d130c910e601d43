package hwreceiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Errors of commandRunner.run, for errors.Is.
var (
	errCommandNotFound = errors.New("command not found")
	errCommandTimeout  = errors.New("command timed out")
	errOutputTooLarge  = errors.New("command output over the size limit")
)

// Output limits. The largest output read (ps on a busy Mac) is a few
// hundred KiB; the bound only keeps a runaway command from filling memory.
const (
	defaultMaxOutput = 16 << 20
	maxStderr        = 4 << 10
	// waitDelay is how long Wait waits for the output pipes after the
	// process exited or was killed, for a grandchild that keeps them open.
	waitDelay = time.Second
)

// commandRunner runs the short-lived commands the sources read. Every run
// is bounded in time (the process group is killed at the deadline) and in
// output size, and runs with LC_ALL=C so numbers are printed the same way
// whatever the user's locale.
type commandRunner struct {
	timeout   time.Duration
	maxOutput int
	// fallbackDirs are searched when a command is not on PATH (a launchd
	// job's PATH may lack /usr/sbin, where sysctl and ioreg live).
	fallbackDirs []string
}

func newCommandRunner(timeout time.Duration) *commandRunner {
	return &commandRunner{timeout: timeout, maxOutput: defaultMaxOutput, fallbackDirs: platformCommandDirs}
}

// run executes name with args and returns its standard output. The output
// is returned with a non-nil error too (a command may print usable output
// and still exit non-zero, as sysctl does for an unknown name). Errors wrap
// errCommandNotFound, errCommandTimeout, errOutputTooLarge or an
// *exec.ExitError, with the first line of standard error in the message.
func (r *commandRunner) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	path, err := r.lookPath(name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	stdout := &cappedBuffer{max: r.maxOutput}
	stderr := &cappedBuffer{max: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay
	inOwnProcessGroup(cmd)

	err = cmd.Run()
	out := stdout.Bytes()
	var exit *exec.ExitError
	switch {
	case err == nil && stdout.overflow:
		return out, fmt.Errorf("%s: %w (%d bytes)", name, errOutputTooLarge, r.maxOutput)
	case err == nil:
		return out, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return out, fmt.Errorf("%s: %w after %s", name, errCommandTimeout, r.timeout)
	case ctx.Err() != nil:
		return out, fmt.Errorf("%s: %w", name, ctx.Err())
	case errors.As(err, &exit):
		// Some commands print their error on standard output (nvidia-smi).
		why := stderr.Bytes()
		if len(bytes.TrimSpace(why)) == 0 {
			why = out
		}
		return out, fmt.Errorf("%s exited with status %d: %s: %w", name, exit.ExitCode(), firstLine(why), err)
	default:
		return out, fmt.Errorf("%s: %w", name, err)
	}
}

func (r *commandRunner) lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range r.fallbackDirs {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w on PATH", name, errCommandNotFound)
}

// cappedBuffer keeps the first max bytes written and discards the rest,
// recording that it did. It never fails a write: a writer that failed would
// leave the command blocked on a full pipe until the timeout.
type cappedBuffer struct {
	buf      bytes.Buffer
	max      int
	overflow bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.buf.Len()
	if room < len(p) {
		b.overflow = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	b.buf.Write(p)
	return len(p), nil
}

func (b *cappedBuffer) Bytes() []byte { return b.buf.Bytes() }

// firstLine is the first non-blank line of a command's standard error, for
// error messages ("sudo: a password is required").
func firstLine(b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return "no error output"
}
