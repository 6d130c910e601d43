package kvcachereceiver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// lineHandler takes the log's complete lines in order.
type lineHandler interface {
	HandleLine(line []byte, fallback time.Time)
	// Settled says whether the lines handled so far fix the latest state,
	// so that reading further back cannot change it.
	Settled() bool
	// Reset forgets all lines handled.
	Reset()
}

const (
	// readChunk is the size of the one read buffer.
	readChunk = 64 << 10
	// fingerprintBytes of the file's start identify its content: when they
	// change, the file was truncated and rewritten in place.
	fingerprintBytes = 512
	// tailCheckBytes before the offset are kept and checked at each poll: an
	// engine that restarts writes the same banner, so a file truncated and
	// rewritten past the old offset between two polls keeps its first
	// bytes, but not the bytes just before where reading stopped.
	tailCheckBytes = 256
)

// follower reads a log file incrementally. It keeps its offset and reads
// only what was appended since the last Poll; it notices rotation by rename
// (the path names another file: the rest of the old one is read first) and
// truncation (the file shrank, or its first bytes changed); and it starts a
// file it has not seen before by reading back from the end only as far as
// the handler needs. Memory stays the read buffer, the fingerprint and one
// unfinished line, however large the file grows.
type follower struct {
	path string
	// readBack bounds how far back from the end a first read goes, and how
	// far behind the end Poll may fall before it jumps to the end instead:
	// only the latest state matters, not every line in between.
	readBack int64
	h        lineHandler

	file   *os.File
	id     os.FileInfo // of file, to tell whether path still names it
	offset int64       // bytes of file read so far
	fp     []byte      // the first bytes of file, up to fingerprintBytes
	fpBuf  []byte
	tail   []byte // the bytes of file just before offset, up to tailCheckBytes
	// released: the path was deleted and the file let go (not held open,
	// so its space is freed); when the path is back it is read from its
	// start, as after a rotation.
	released bool
	lines    lineSplitter
	buf      []byte

	// fallback is the time given with each line (see HandleLine); emit is
	// the bound method handed to the splitter, made once.
	fallback time.Time
	emit     func([]byte)
}

func newFollower(path string, readBack int64, h lineHandler) *follower {
	f := &follower{
		path:     path,
		readBack: readBack,
		h:        h,
		fp:       make([]byte, 0, fingerprintBytes),
		fpBuf:    make([]byte, fingerprintBytes),
		tail:     make([]byte, 0, tailCheckBytes),
		lines:    newLineSplitter(),
		buf:      make([]byte, readChunk),
	}
	f.emit = func(line []byte) { f.h.HandleLine(line, f.fallback) }
	return f
}

// Poll reads what the log gained since the last call. now is the time given
// to lines without a timestamp. An error means the log could not be read
// at path now (it does not exist, or cannot be opened); what could be read
// has been handled all the same.
func (f *follower) Poll(now time.Time) error {
	f.fallback = now
	if f.file == nil {
		if f.released {
			return f.reopen()
		}
		return f.openFirst()
	}
	cur, err := os.Stat(f.path)
	if err != nil {
		// Renamed away and not yet recreated, or deleted: what the writer
		// added to the file held open is still read. A deleted file is
		// then let go, so that it does not keep its disk space.
		derr := f.readToEnd()
		if errors.Is(err, fs.ErrNotExist) && unlinked(f.file) {
			_ = f.file.Close()
			f.file, f.released = nil, true
		}
		if derr != nil {
			return derr
		}
		return err
	}
	if !os.SameFile(cur, f.id) {
		return f.rotate()
	}
	return f.readNew()
}

// openFirst opens a file not seen before and reads back from its end.
func (f *follower) openFirst() error {
	file, id, err := openLog(f.path)
	if err != nil {
		return err
	}
	f.file, f.id, f.fp = file, id, f.fp[:0]
	if _, err := f.sameContent(id.Size()); err != nil {
		return err
	}
	// No line of an existing file is newer than its modification time.
	f.fallback = id.ModTime()
	return f.readBackFrom(id.Size())
}

// reopen opens the file that came back at path after a deletion, and reads
// it from its start. The handler's state and an unfinished line are kept,
// as in rotate.
func (f *follower) reopen() error {
	file, id, err := openLog(f.path)
	if err != nil {
		return err
	}
	f.file, f.id, f.released = file, id, false
	f.offset, f.fp, f.tail = 0, f.fp[:0], f.tail[:0]
	return f.readNew()
}

// rotate finishes the file that was renamed away, then switches to the new
// one at path and reads it from its start. An unfinished last line of the
// old file is kept: a writer that rotates between two writes of a pipe's
// output can split a line across the two files.
func (f *follower) rotate() error {
	if err := f.readToEnd(); err != nil {
		return err
	}
	file, id, err := openLog(f.path)
	if err != nil {
		return err
	}
	_ = f.file.Close()
	f.file, f.id, f.offset, f.fp, f.tail = file, id, 0, f.fp[:0], f.tail[:0]
	return f.readNew()
}

// readNew reads from the offset to the current end of the file held.
func (f *follower) readNew() error {
	st, err := f.file.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	same, err := f.sameContent(size)
	if err != nil {
		return err
	}
	if same && size >= f.offset {
		if same, err = f.sameTail(); err != nil {
			return err
		}
	}
	if size < f.offset || !same {
		// Truncated (copy-truncate rotation, or rewritten in place): the
		// content read so far is gone and the new content starts at 0.
		f.offset, f.fp, f.tail = 0, f.fp[:0], f.tail[:0]
		f.lines.reset()
		if _, err := f.sameContent(size); err != nil {
			return err
		}
	}
	if size-f.offset > f.readBack {
		return f.readBackFrom(size)
	}
	return f.readRange(size)
}

// readToEnd reads the file held to its end, for its last lines before a
// switch.
func (f *follower) readToEnd() error {
	st, err := f.file.Stat()
	if err != nil {
		return err
	}
	return f.readRange(st.Size())
}

// readRange reads [offset, end) and hands on its complete lines.
func (f *follower) readRange(end int64) error {
	for f.offset < end {
		n, err := f.file.ReadAt(f.buf[:min(int64(len(f.buf)), end-f.offset)], f.offset)
		if n > 0 {
			f.offset += int64(n)
			f.keepTail(f.buf[:n])
			f.lines.feed(f.buf[:n], f.emit)
		}
		if errors.Is(err, io.EOF) {
			return nil // the file shrank under us; the next Poll sees it
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// firstReadBackWindow is where the search for the latest state starts; each
// further window is four times larger, up to readBack.
const firstReadBackWindow = 64 << 10

// readBackFrom reads the end of a file of the given size far enough back
// for the handler to settle, parsing ever larger windows, at most readBack
// bytes. A state settled in a window is the latest of the whole file:
// anything newer would begin after it, inside the window too.
func (f *follower) readBackFrom(size int64) error {
	window := min(int64(firstReadBackWindow), f.readBack)
	for {
		start := max(size-window, 0)
		f.h.Reset()
		f.lines.reset()
		if start > 0 {
			cut, err := f.startsMidLine(start)
			if err != nil {
				return err
			}
			f.lines.skipping = cut
		}
		f.offset, f.tail = start, f.tail[:0]
		if err := f.readRange(size); err != nil {
			return err
		}
		if f.h.Settled() || start == 0 || window >= f.readBack {
			return nil
		}
		window = min(window*4, f.readBack)
	}
}

// startsMidLine says whether offset off falls inside a line, whose cut
// start must then be skipped.
func (f *follower) startsMidLine(off int64) (bool, error) {
	var b [1]byte
	if _, err := f.file.ReadAt(b[:], off-1); err != nil {
		return false, err
	}
	return b[0] != '\n', nil
}

// sameContent checks the file's first bytes against those recorded, and
// records more of them while the file is shorter than fingerprintBytes.
func (f *follower) sameContent(size int64) (bool, error) {
	n := int(min(size, fingerprintBytes))
	if n < len(f.fp) {
		return false, nil
	}
	if n == 0 {
		return true, nil
	}
	m, err := f.file.ReadAt(f.fpBuf[:n], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	head := f.fpBuf[:m]
	if !bytes.HasPrefix(head, f.fp) {
		return false, nil
	}
	f.fp = append(f.fp[:0], head...)
	return true, nil
}

// keepTail records the last bytes read, for sameTail.
func (f *follower) keepTail(read []byte) {
	if len(read) >= tailCheckBytes {
		f.tail = append(f.tail[:0], read[len(read)-tailCheckBytes:]...)
		return
	}
	if over := len(f.tail) + len(read) - tailCheckBytes; over > 0 {
		f.tail = append(f.tail[:0], f.tail[over:]...)
	}
	f.tail = append(f.tail, read...)
}

// sameTail checks that the bytes just before the offset are still those
// read there.
func (f *follower) sameTail() (bool, error) {
	if len(f.tail) == 0 {
		return true, nil
	}
	b := f.fpBuf[:len(f.tail)] // fingerprintBytes > tailCheckBytes: no allocation
	n, err := f.file.ReadAt(b, f.offset-int64(len(f.tail)))
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return bytes.Equal(b[:n], f.tail), nil
}

// Close releases the file held.
func (f *follower) Close() error {
	if f.file == nil {
		return nil
	}
	err := f.file.Close()
	f.file = nil
	return err
}

// openLog opens a regular file at path. It opens without blocking, so a
// FIFO (or a device) put at the path is refused instead of waiting forever
// for a writer.
func openLog(path string) (*os.File, os.FileInfo, error) {
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := file.Stat()
	if err != nil {
		_ = file.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		_ = file.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file (%s); a log to follow must be", path, st.Mode().Type())
	}
	return file, st, nil
}
