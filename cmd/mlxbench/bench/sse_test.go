package bench

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func readAllSSE(t *testing.T, in string) ([]SSEEvent, error) {
	t.Helper()
	r := NewSSEReader(strings.NewReader(in))
	var out []SSEEvent
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	data := func(s string) SSEEvent { return SSEEvent{Kind: SSEData, Data: s} }
	comment := func(s string) SSEEvent { return SSEEvent{Kind: SSEComment, Data: s} }
	for _, tc := range []struct {
		name string
		in   string
		want []SSEEvent
		err  error
	}{
		{"mlx_lm stream", ": keepalive 0/12\n\n: keepalive 12/12\n\ndata: {\"a\": 1}\n\ndata: [DONE]\n\n",
			[]SSEEvent{comment(" keepalive 0/12"), comment(" keepalive 12/12"), data(`{"a": 1}`), data("[DONE]")}, nil},
		{"CRLF", "data: x\r\n\r\ndata: y\r\n\r\n", []SSEEvent{data("x"), data("y")}, nil},
		{"lone CR", "data: x\r\rdata: y\r\r", []SSEEvent{data("x"), data("y")}, nil},
		{"multi-line data", "data: a\ndata: b\n\n", []SSEEvent{data("a\nb")}, nil},
		{"no space after colon", "data:x\n\n", []SSEEvent{data("x")}, nil},
		{"only one space stripped", "data:  x\n\n", []SSEEvent{data(" x")}, nil},
		{"field without colon", "data\n\n", []SSEEvent{data("")}, nil},
		{"event and id", "event: delta\nid: 7\ndata: x\n\n", []SSEEvent{{Kind: SSEData, Event: "delta", ID: "7", Data: "x"}}, nil},
		{"event without data is not dispatched", "event: ping\n\ndata: x\n\n", []SSEEvent{data("x")}, nil},
		{"unknown field ignored", "retry: 10\nfoo: bar\ndata: x\n\n", []SSEEvent{data("x")}, nil},
		{"cut mid-event", "data: x\n\ndata: {\"trunc", []SSEEvent{data("x")}, io.ErrUnexpectedEOF},
		{"cut before blank line", "data: x\n", nil, io.ErrUnexpectedEOF},
		{"empty", "", nil, nil},
		{"long line", "data: " + strings.Repeat("z", 100000) + "\n\n", []SSEEvent{data(strings.Repeat("z", 100000))}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAllSSE(t, tc.in)
			if !errors.Is(err, tc.err) && err != tc.err {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d events %+v, want %+v", len(got), got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("event %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// An event is handed over when its blank line arrives, without waiting
// for more bytes, even after a CR that a LF might follow.
func TestSSEReaderDoesNotWaitAfterCR(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	r := NewSSEReader(pr)
	go func() { _, _ = pw.Write([]byte("data: x\r\r")) }()
	done := make(chan SSEEvent, 1)
	go func() {
		ev, _ := r.Next()
		done <- ev
	}()
	select {
	case ev := <-done:
		if ev.Data != "x" {
			t.Fatalf("got %+v", ev)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the event waited for the next byte")
	}
}
