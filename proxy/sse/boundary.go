package sse

import "bytes"

// Event boundaries without parsing. A relay that holds back an unfinished
// event needs two cheaper answers than Next gives: whether new bytes can
// have finished an event at all (so a large unfinished event is not parsed
// again at every read), and where an event it no longer parses ends (so
// it can pass one through unread and pick up the stream after it).

// MayEndEvent reports whether b, which starts at an event boundary, can
// hold a complete event, when b[:scanned] was already found to hold none:
// only then can Next find one. An event ends at a blank line, which is a
// line end at the start of b or two line ends in a row (\n\n, \r\r or
// \n\r: every blank line of LF, CR or CRLF lines has one). It looks at the
// bytes after scanned (and the one before), so a large unfinished event
// is scanned once, not at every read.
func MayEndEvent(b []byte, scanned int) bool {
	if len(b) > 0 && scanned == 0 && (b[0] == '\n' || b[0] == '\r') {
		return true
	}
	rest := b[max(scanned-1, 0):]
	return bytes.Contains(rest, []byte("\n\n")) || bytes.Contains(rest, []byte("\r\r")) || bytes.Contains(rest, []byte("\n\r"))
}

// EventEnd returns the index just past the first blank line in b, prev
// being the byte that came before b in the stream, or -1 when b holds
// none.
func EventEnd(prev byte, b []byte) int {
	for i, c := range b {
		p := prev
		if i > 0 {
			p = b[i-1]
		}
		if c == '\n' && p == '\n' || c == '\r' && p == '\r' {
			return i + 1
		}
		if c == '\n' && p == '\r' && i+1 < len(b) && (b[i+1] == '\n' || b[i+1] == '\r') {
			// CRLF then a lone line end: the blank line ends after it.
			end := i + 2
			if b[i+1] == '\r' && end < len(b) && b[end] == '\n' {
				end++
			}
			return end
		}
	}
	return -1
}
