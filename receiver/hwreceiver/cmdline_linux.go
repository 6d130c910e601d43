package hwreceiver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/shirou/gopsutil/v4/common"
)

// cmdlineReader reads /proc/<pid>/cmdline of every process at each
// collection, the hardware receiver's largest cost when nothing else
// happens. gopsutil's Process.Cmdline reads it with os.ReadFile: nine
// system calls a process (open; the poller's fcntl and epoll_ctl, which a
// regular file refuses, and fcntl back; fstat; two reads; close) and four
// allocations. This one opens, reads into one reused buffer and closes:
// four system calls and the string the matcher needs. The result is
// gopsutil v4.26.10's (process_linux.go, fillFromCmdlineWithContext): the
// arguments, empty ones dropped, joined by spaces.
type cmdlineReader struct {
	buf []byte
}

func (r *cmdlineReader) read(ctx context.Context, pid int32) (string, error) {
	path := filepath.Join(hostProc(ctx), strconv.Itoa(int(pid)), "cmdline")
	fd, err := openRetry(path)
	if err != nil {
		return "", err
	}
	defer syscall.Close(fd)
	if r.buf == nil {
		r.buf = make([]byte, 4096)
	}
	n := 0
	for {
		if n == len(r.buf) {
			r.buf = append(r.buf, make([]byte, len(r.buf))...)
		}
		m, err := syscall.Read(fd, r.buf[n:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return "", &os.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			return joinArgs(r.buf[:n]), nil
		}
		n += m
	}
}

func openRetry(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// joinArgs turns the NUL-separated arguments into one line, empty
// arguments dropped, in place.
func joinArgs(b []byte) string {
	out := b[:0]
	field := false
	for _, c := range b {
		if c == 0 {
			field = false
			continue
		}
		if !field && len(out) > 0 {
			out = append(out, ' ')
		}
		field = true
		out = append(out, c)
	}
	return string(out)
}

// hostProc is /proc, or HOST_PROC from the context or the environment, as
// gopsutil resolves it (internal/common, HostProcWithContext).
func hostProc(ctx context.Context) string {
	if env, ok := ctx.Value(common.EnvKey).(common.EnvMap); ok && env[common.HostProcEnvKey] != "" {
		return env[common.HostProcEnvKey]
	}
	if v := os.Getenv("HOST_PROC"); v != "" {
		return v
	}
	return "/proc"
}
