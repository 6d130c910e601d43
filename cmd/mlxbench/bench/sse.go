package bench

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// SSE framing as the WHATWG event-stream spec defines it, which is what
// mlx_lm.server writes: "data: <json>\n\n" per chunk, ": keepalive n/m"
// comments during prefill, then "data: [DONE]". The reader hands each
// comment and each dispatched event to the caller as soon as its line ends,
// so a chunk's arrival time is the time its blank line was read (a client
// library that hides comments, or buffers a line ending in CR until it
// sees whether LF follows, would shift TTFT).

// SSEKind says what an SSEEvent is.
type SSEKind int

const (
	// SSEData is a dispatched event (one or more data lines).
	SSEData SSEKind = iota
	// SSEComment is a line starting with ':' (mlx_lm's keepalives).
	SSEComment
)

// SSEEvent is one comment or one dispatched event.
type SSEEvent struct {
	Kind SSEKind
	// Event is the "event:" field ("" = message); ID the last "id:".
	Event string
	ID    string
	// Data is the data lines joined by "\n"; for a comment, its text
	// after the colon (leading space kept, as the spec ignores it anyway).
	Data string
}

// SSEReader reads events from a stream.
type SSEReader struct {
	r       *bufio.Reader
	afterCR bool // the last line ended in CR: a following LF belongs to it
	data    []string
	hasData bool
	event   string
	id      string
}

// NewSSEReader reads from r. Lines may be as long as memory allows (a
// tool call's arguments can make one chunk large).
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{r: bufio.NewReaderSize(r, 16<<10)}
}

// readLine returns the next line without its terminator (LF, CRLF or a
// lone CR). It never waits for the byte after a CR: it remembers that a LF
// first on the next read is the rest of this terminator. At the end of the
// stream a last line without terminator is returned with io.EOF, which the
// spec says to discard when it would complete an event.
func (s *SSEReader) readLine() (string, error) {
	var line []byte
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				return string(line), io.ErrUnexpectedEOF
			}
			return string(line), err
		}
		if s.afterCR {
			s.afterCR = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return string(line), nil
		case '\r':
			s.afterCR = true
			return string(line), nil
		}
		line = append(line, b)
		// Read the rest of a plain line in one go.
		if chunk, err := s.r.Peek(s.r.Buffered()); err == nil && len(chunk) > 0 {
			i := bytes.IndexAny(chunk, "\r\n")
			if i < 0 {
				i = len(chunk)
			}
			line = append(line, chunk[:i]...)
			_, _ = s.r.Discard(i)
		}
	}
}

// Next returns the next comment or event. At the end of the stream it
// returns io.EOF; an event left incomplete by the end (no blank line) is
// dropped and the error is io.ErrUnexpectedEOF, so a stream cut mid-event
// is told apart from one that ended between events.
func (s *SSEReader) Next() (SSEEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && s.hasData {
				err = io.ErrUnexpectedEOF
			}
			s.reset()
			return SSEEvent{}, err
		}
		if line == "" {
			if !s.hasData {
				s.event = "" // an event without data is not dispatched
				continue
			}
			ev := SSEEvent{Kind: SSEData, Event: s.event, ID: s.id, Data: strings.Join(s.data, "\n")}
			s.reset()
			return ev, nil
		}
		if line[0] == ':' {
			return SSEEvent{Kind: SSEComment, Data: line[1:]}, nil
		}
		field, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "data":
			s.data = append(s.data, value)
			s.hasData = true
		case "event":
			s.event = value
		case "id":
			if !strings.ContainsRune(value, 0) {
				s.id = value
			}
		}
		// "retry" and unknown fields are ignored, as the spec says.
	}
}

func (s *SSEReader) reset() {
	s.data = s.data[:0]
	s.hasData = false
	s.event = ""
}
