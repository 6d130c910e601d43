package supervisorreceiver

import (
	"context"
	"io"
	"os"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// Attach mode: the engine is started by someone else (launchd, a shell,
// mlx.launch on another host) and writes its own log. A dead generation
// thread leaves /health answering (threadwatch.go), so probes alone would
// call it "not ready" with no reason. The follower reads what the engine
// appends to log.path, as tail -F does, and counts a thread death as a
// crash with its reason from the traceback. It cannot restart the engine:
// that is its owner's job, and the alert on mlx_server_crashes_total names
// the reason for whoever does it.

// Follower timing and bounds.
const (
	followInterval = time.Second
	// followMaxRead bounds one poll's read: a log that grew by more (a
	// flood, or a file swapped for a big one) is read from its last
	// followMaxRead bytes, which hold any traceback that matters now.
	followMaxRead = 1 << 20
)

type logFollower struct {
	path   string
	st     *status
	logger *zap.Logger

	// f is the file being read, held open between polls so that a
	// rotated file's last lines are still read (tail -F). off is how far.
	f     *os.File
	fi    os.FileInfo // f's, kept after close: a reopened same file goes on at off
	off   int64
	watch *threadWatch
	tail  tailBuffer
	// dying: a death line was read; its traceback is classified at the
	// next poll, when the rest of it has been written.
	dying bool
}

// newLogFollower starts at the end of the file as it is now: deaths
// written before the collector started are history, not news. A file
// that appears later (the engine not started yet, or rotated away) is
// read from its start.
func newLogFollower(path string, st *status, logger *zap.Logger) *logFollower {
	f := &logFollower{path: path, st: st, logger: logger, watch: newThreadWatch()}
	if fh, fi := openRegular(path); fh != nil {
		f.f, f.fi, f.off = fh, fi, fi.Size()
	}
	return f
}

// openRegular opens path for reading if it is a regular file. Without
// blocking: a FIFO at the path would wait for a writer forever.
func openRegular(path string) (*os.File, os.FileInfo) {
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil
	}
	fi, err := fh.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		fh.Close()
		return nil, nil
	}
	return fh, fi
}

func (f *logFollower) run(ctx context.Context) {
	defer f.close()
	t := time.NewTicker(followInterval)
	defer t.Stop()
	for {
		f.poll()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (f *logFollower) close() {
	if f.f != nil {
		f.f.Close()
		f.f = nil
	}
}

// poll reads what was appended since the last poll: the rest of the file
// held open, then, if the path now names another file (rotated) or the
// file shrank (truncated), the new one from its start.
func (f *logFollower) poll() {
	if f.dying {
		f.dying = false
		f.recordDeath()
	}
	if f.f != nil {
		if fi, err := f.f.Stat(); err == nil && fi.Size() < f.off {
			f.off = 0 // truncated in place
		}
		f.readRest()
	}
	cur, err := os.Stat(f.path)
	if err != nil {
		return // rotated away and not yet recreated: keep the old handle
	}
	if f.f != nil {
		if held, err := f.f.Stat(); err == nil && os.SameFile(held, cur) {
			return
		}
	}
	fh, fi := openRegular(f.path)
	if fh == nil {
		return
	}
	f.close()
	if f.fi == nil || !os.SameFile(f.fi, fi) {
		f.off = 0
	}
	f.f, f.fi = fh, fi
	f.readRest()
}

// readRest reads the held file from off to its end, at most followMaxRead
// (a log that grew by more is read from its last followMaxRead bytes,
// which hold any traceback that matters now).
func (f *logFollower) readRest() {
	fi, err := f.f.Stat()
	if err != nil {
		return
	}
	from := max(f.off, fi.Size()-followMaxRead)
	if fi.Size() <= from {
		return
	}
	b, err := io.ReadAll(io.NewSectionReader(f.f, from, fi.Size()-from))
	if err != nil {
		return
	}
	f.off = from + int64(len(b))
	if showsGeneration(b) {
		f.st.lastOutput.Store(time.Now().UnixNano())
	}
	_, _ = f.tail.Write(b)
	_, _ = f.watch.Write(b)
	select {
	case <-f.watch.died:
		f.dying = true
	default:
	}
}

// recordDeath counts the death and watches for the next one: the engine's
// owner may restart it into the same log.
func (f *logFollower) recordDeath() {
	reason := classifyCrash(deathText(f.tail.Bytes()), exitStatus{})
	f.logger.Error("A thread of the engine died (its traceback is in its log): it serves nothing more, though its process lives; attach mode cannot restart it",
		zap.String("reason", reason), zap.String("log", f.path))
	f.st.mu.Lock()
	f.st.crashes[reason]++
	f.st.lastReason = reason
	f.st.ready = false
	f.st.mu.Unlock()
	f.tail.Reset()
	f.watch = newThreadWatch()
}
