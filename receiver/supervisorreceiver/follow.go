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

	file  os.FileInfo // the file read last, to see a rotation
	off   int64
	watch *threadWatch
	tail  tailBuffer
	// dying: a death line was read; its traceback is classified at the
	// next poll, when the rest of it has been written.
	dying bool
}

func newLogFollower(path string, st *status, logger *zap.Logger) *logFollower {
	return &logFollower{path: path, st: st, logger: logger, watch: newThreadWatch()}
}

func (f *logFollower) run(ctx context.Context) {
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

// poll reads what was appended since the last poll. The first poll starts
// at the end: deaths written before the collector started are history, not
// news.
func (f *logFollower) poll() {
	if f.dying {
		f.dying = false
		f.recordDeath()
	}
	// Without blocking: a FIFO at the path would wait for a writer forever.
	fh, err := os.OpenFile(f.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return // not there yet, or rotated away and not yet recreated
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	switch {
	case f.file == nil:
		f.off = fi.Size()
	case !os.SameFile(f.file, fi) || fi.Size() < f.off:
		f.off = 0 // rotated or truncated: the new file from its start
	}
	f.file = fi
	from := max(f.off, fi.Size()-followMaxRead)
	if fi.Size() <= from {
		return
	}
	b, err := io.ReadAll(io.NewSectionReader(fh, from, fi.Size()-from))
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
