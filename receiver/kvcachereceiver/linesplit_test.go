package kvcachereceiver

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func split(chunks ...string) []string {
	s := newLineSplitter()
	var got []string
	for _, c := range chunks {
		s.feed([]byte(c), func(l []byte) { got = append(got, string(l)) })
	}
	return got
}

func TestAHalfWrittenLineWaitsForItsEnd(t *testing.T) {
	assert.Equal(t, []string{"one", "two"}, split("one\ntw", "o\nthr"))
	assert.Equal(t, []string{"abc"}, split("a", "b", "c\r\n"))
	assert.Equal(t, []string{"", ""}, split("\n\r\n"))
	assert.Nil(t, split("no line feed yet"))
}

func TestOverlongLinesAreDroppedWhole(t *testing.T) {
	long := strings.Repeat("x", maxLineBytes+1)
	assert.Equal(t, []string{"before", "after"}, split("before\n", long[:100], long[100:], "\nafter\n"))
	assert.Equal(t, []string{"before", "after"}, split("before\n"+long+"\nafter\n"))
	exact := strings.Repeat("y", maxLineBytes)
	assert.Equal(t, []string{exact}, split(exact[:10], exact[10:]+"\n"))
}

// FuzzLineSplitter: however the stream is cut into reads, the lines handed
// on are its complete lines, and nothing else.
func FuzzLineSplitter(f *testing.F) {
	f.Add([]byte("a\nbb\r\nccc"), uint8(1), uint8(3))
	f.Add(bytes.Repeat([]byte("z"), 40000), uint8(7), uint8(200))
	f.Fuzz(func(t *testing.T, stream []byte, cut1, cut2 uint8) {
		var want []string
		lines := bytes.Split(stream, []byte("\n"))
		for _, l := range lines[:len(lines)-1] { // the last has no line feed
			if len(l) <= maxLineBytes {
				want = append(want, string(bytes.TrimSuffix(l, []byte("\r"))))
			}
		}
		s := newLineSplitter()
		var got []string
		emit := func(l []byte) { got = append(got, string(l)) }
		// Reads of varying sizes, as a follower racing a writer sees them.
		for i, step := 0, 0; len(stream) > 0; i++ {
			step = 1 + int(cut1)*(i%3) + int(cut2)*(i%2)*97
			step = min(step, len(stream))
			s.feed(stream[:step], emit)
			stream = stream[step:]
		}
		if !equalStrings(want, got) {
			t.Fatalf("lines\n got %q\nwant %q", got, want)
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
