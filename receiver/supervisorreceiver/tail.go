package supervisorreceiver

import (
	"io"
	"os"
	"sync"
	"syscall"
)

// tailSize is how much of the engine's output is kept for crash reasons, as
// much as the original read back from its log.
const tailSize = 8 << 10

// tailBuffer keeps the last tailSize bytes written to it. It sits beside the
// log file so that a crash is classified from what this run of the engine
// printed, not from an older run's lines or a file rotated away.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// Bytes returns a copy of what is kept.
func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}

func (t *tailBuffer) Reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}

// readFileTail returns the last n bytes of a file, for attach mode where the
// engine writes its log itself.
func readFileTail(path string, n int64) []byte {
	// Without blocking: a FIFO at the path would wait for a writer forever.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	off := max(st.Size()-n, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return nil
	}
	return b
}
