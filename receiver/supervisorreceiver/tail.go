package supervisorreceiver

import "sync"

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
