package kvcachereceiver

import "bytes"

// maxLineBytes bounds the memory a line may take. The lines this receiver
// reads are under 100 bytes; a longer one (a DEBUG dump of a request body,
// a binary blob) is dropped whole without being held.
const maxLineBytes = 16 << 10

// lineSplitter cuts a byte stream into complete lines. The start of a line
// whose end has not been read yet is kept until it has: a half-written line
// is never handed on.
type lineSplitter struct {
	pending []byte
	// skipping: inside a line longer than maxLineBytes, dropped up to its
	// end. Also set to skip the cut first line of a read that starts in the
	// middle of a file.
	skipping bool
}

func newLineSplitter() lineSplitter {
	return lineSplitter{pending: make([]byte, 0, maxLineBytes)}
}

// feed splits b and calls emit with each line completed by it, without the
// line feed or a carriage return before it. emit must not keep the slice.
func (s *lineSplitter) feed(b []byte, emit func([]byte)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.keep(b)
			return
		}
		line := b[:i]
		b = b[i+1:]
		switch {
		case s.skipping:
			s.skipping = false
		case len(s.pending) > 0:
			if len(s.pending)+len(line) <= maxLineBytes {
				s.pending = append(s.pending, line...)
				emit(trimCR(s.pending))
			}
			s.pending = s.pending[:0]
		case len(line) <= maxLineBytes:
			emit(trimCR(line))
		}
	}
}

// keep holds the start of an unfinished line, or starts skipping it when it
// is already too long.
func (s *lineSplitter) keep(b []byte) {
	if s.skipping {
		return
	}
	if len(s.pending)+len(b) > maxLineBytes {
		s.pending, s.skipping = s.pending[:0], true
		return
	}
	s.pending = append(s.pending, b...)
}

// reset drops an unfinished line, for a read that starts elsewhere.
func (s *lineSplitter) reset() { s.pending, s.skipping = s.pending[:0], false }

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
