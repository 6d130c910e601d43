// Package sse splits a Server-Sent Events byte stream into events without
// changing a byte of it. It is a pure function over bytes so the proxy can
// relay an event the moment its terminating blank line arrives, look inside
// it, and forward (or drop) exactly the bytes the engine sent.
//
// It follows the WHATWG event-stream grammar: lines end with CRLF, LF or CR;
// a blank line ends an event; a line starting with ':' is a comment (mlx_lm
// sends `: keepalive N/M` during prefill); `data:` lines are joined with LF;
// one space after the colon is dropped.
package sse

import "bytes"

// Event is one complete event as it appeared on the wire.
type Event struct {
	// Raw is every byte of the event, its terminating blank line included.
	// Concatenating the Raw of successive events gives back the input.
	Raw []byte
	// Data is the value of the data field: the data lines joined with "\n".
	// HasData is false when the event has no data line at all.
	Data    []byte
	HasData bool
	// DataAt is where Data starts in Raw when the event has exactly one
	// data line (Data is then Raw[DataAt:DataAt+len(Data)], so a relay can
	// replace the value and keep every other byte); -1 otherwise.
	DataAt int
	// Comment is true when every non-blank line of the event is a comment,
	// like mlx_lm's keepalives.
	Comment bool
}

// IsDone reports whether the event is the OpenAI end-of-stream marker.
func (e Event) IsDone() bool {
	return e.HasData && bytes.Equal(e.Data, done)
}

var done = []byte("[DONE]")

// Next returns the first complete event in b and the number of bytes it
// takes. ok is false when b does not yet hold a whole event: more bytes are
// needed. A CR at the very end of b is not taken as a line end, because an
// LF may follow in the next read.
//
// Data aliases b when the event has one data line; with several lines it is
// a new slice.
func Next(b []byte) (ev Event, n int, ok bool) {
	pos := 0
	dataLines := 0
	ev.DataAt = -1
	sawField := false
	allComments := true
	for {
		end, term, complete := lineEnd(b, pos)
		if !complete {
			return Event{}, 0, false
		}
		line := b[pos:end]
		next := end + term
		if len(line) == 0 {
			ev.Raw = b[:next]
			ev.Comment = sawField && allComments
			if dataLines != 1 {
				ev.DataAt = -1
			}
			return ev, next, true
		}
		sawField = true
		if line[0] == ':' {
			pos = next
			continue
		}
		allComments = false
		name, value, at := field(line)
		if string(name) == "data" {
			dataLines++
			switch dataLines {
			case 1:
				ev.Data, ev.DataAt = value, pos+at
			case 2:
				joined := make([]byte, 0, len(ev.Data)+1+len(value))
				joined = append(joined, ev.Data...)
				joined = append(joined, '\n')
				ev.Data = append(joined, value...)
			default:
				ev.Data = append(append(ev.Data, '\n'), value...)
			}
			ev.HasData = true
		}
		pos = next
	}
}

// lineEnd finds the end of the line that starts at pos: the index of its
// terminator and the terminator's length. complete is false when no
// terminator is certain yet.
func lineEnd(b []byte, pos int) (end, term int, complete bool) {
	rest := b[pos:]
	i := indexLineEnd(rest)
	if i < 0 {
		return 0, 0, false
	}
	end = pos + i
	if rest[i] == '\n' {
		return end, 1, true
	}
	// CR: a CRLF pair or a lone CR; undecidable when the CR is last.
	if i+1 == len(rest) {
		return 0, 0, false
	}
	if rest[i+1] == '\n' {
		return end, 2, true
	}
	return end, 1, true
}

// indexLineEnd is bytes.IndexAny(b, "\r\n"), which tests a byte at a time
// (a chunk's data line is its whole length): a vectorised search for LF,
// then one for CR before it.
func indexLineEnd(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	if lf < 0 {
		lf = len(b)
	}
	if cr := bytes.IndexByte(b[:lf], '\r'); cr >= 0 {
		return cr
	}
	if lf == len(b) {
		return -1
	}
	return lf
}

// field splits a non-comment line into its name and value, and says
// where the value starts in the line.
func field(line []byte) (name, value []byte, at int) {
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return line, nil, len(line)
	}
	name, value, at = line[:i], line[i+1:], i+1
	if len(value) > 0 && value[0] == ' ' {
		value, at = value[1:], at+1
	}
	return name, value, at
}
