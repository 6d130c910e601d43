package jsonlexporter

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"gopkg.in/natefinch/lumberjack.v2"
)

// writer appends batches to the rotated file.
type writer struct {
	mu     sync.Mutex
	path   string
	out    io.Writer // the rotating file: lumberjack
	closer io.Closer
	encode func([]byte, plog.Logs) ([]byte, error)
	buf    []byte
	limit  int // lumberjack refuses a single write larger than the file size
}

func newWriter(c *Config) *writer {
	lj := &lumberjack.Logger{
		Filename:   c.Path,
		MaxSize:    c.Rotation.MaxMegabytes,
		MaxBackups: c.Rotation.MaxBackups,
		MaxAge:     c.Rotation.MaxDays,
		LocalTime:  c.Rotation.LocalTime,
		Compress:   c.Rotation.Compress,
	}
	w := &writer{
		path:   c.Path,
		out:    lj,
		closer: lj,
		encode: appendRecords,
		limit:  c.Rotation.MaxMegabytes * 1024 * 1024,
	}
	if c.Format == FormatOTLPJSON {
		w.encode = appendOTLPJSON
	}
	return w
}

// push writes one batch with one write call: lumberjack rotates before a
// write that would not fit, so a batch never straddles two files, and the
// lines of a batch are never interleaved with another's.
func (w *writer) push(_ context.Context, ld plog.Logs) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	w.buf, err = w.encode(w.buf[:0], ld)
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	if len(w.buf) > w.limit {
		return consumererror.NewPermanent(fmt.Errorf("a batch of %d bytes does not fit in a file of rotation.max_megabytes; lower the sending_queue batch size", len(w.buf)))
	}
	before, beforeErr := os.Stat(w.path)
	if _, err := w.out.Write(w.buf); err != nil {
		w.rollBack(before, beforeErr)
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if cap(w.buf) > 4<<20 {
		w.buf = nil // do not keep an exceptional batch's buffer
	}
	return nil
}

// rollBack takes off what a failed write left (a full disk takes part of
// a batch): the batch is retried whole from the queue, so a part kept would
// be a torn line and, once retried, lines written twice. before is the file
// at path before the write; a file new since (lumberjack rotated first)
// goes back to empty.
func (w *writer) rollBack(before os.FileInfo, beforeErr error) {
	now, err := os.Stat(w.path)
	if err != nil {
		return
	}
	size := int64(0)
	if beforeErr == nil && os.SameFile(before, now) {
		size = before.Size()
	}
	if now.Size() > size {
		_ = os.Truncate(w.path, size)
	}
	// lumberjack opens a file it creates without O_APPEND: its offset
	// would stay past the truncation, and the retry would leave a hole of
	// NUL bytes. Closed, it reopens the file for appending on the next
	// write.
	_ = w.closer.Close()
}

func (w *writer) shutdown(context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closer.Close()
}
