package sse

import (
	"bytes"
	"testing"
)

// FuzzNext holds two properties a relay depends on, for any input and any
// way the network cuts it into reads:
//   - nothing is lost or changed: the events' raw bytes plus the leftover
//     are the input;
//   - the cut does not matter: feeding the input in two reads gives the same
//     events as feeding it whole.
func FuzzNext(f *testing.F) {
	f.Add([]byte(mlxStream), 10)
	f.Add([]byte("data: a\r\n\r\ndata: b\rdata: c\r\r: c\n\n"), 3)
	f.Add([]byte("data: x\r"), 8)
	f.Add([]byte("\n\n\r\r\r\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		whole, rest := all(in)
		var joined []byte
		for _, e := range whole {
			if len(e.Raw) == 0 {
				t.Fatal("empty event")
			}
			if !e.HasData && e.Data != nil {
				t.Fatal("data without a data line")
			}
			if e.DataAt >= 0 && !bytes.Equal(e.Raw[e.DataAt:e.DataAt+len(e.Data)], e.Data) {
				t.Fatalf("DataAt %d does not point at the data %q in %q", e.DataAt, e.Data, e.Raw)
			}
			joined = append(joined, e.Raw...)
		}
		joined = append(joined, rest...)
		if !bytes.Equal(joined, in) {
			t.Fatalf("bytes changed: %q -> %q", in, joined)
		}

		if len(in) == 0 {
			return
		}
		if cut < 0 {
			cut = -cut
		}
		cut %= len(in) + 1
		var buf []byte
		var got []Event
		for _, part := range [][]byte{in[:cut], in[cut:]} {
			buf = append(buf, part...)
			evs, left := all(buf)
			for _, e := range evs {
				got = append(got, Event{Raw: bytes.Clone(e.Raw), Data: bytes.Clone(e.Data), HasData: e.HasData, Comment: e.Comment})
			}
			buf = append([]byte(nil), left...)
		}
		if len(got) != len(whole) {
			t.Fatalf("cut at %d: %d events, whole: %d", cut, len(got), len(whole))
		}
		for i := range got {
			w := whole[i]
			if !bytes.Equal(got[i].Raw, w.Raw) || !bytes.Equal(got[i].Data, w.Data) || got[i].HasData != w.HasData || got[i].Comment != w.Comment {
				t.Fatalf("cut at %d: event %d differs: %+v vs %+v", cut, i, got[i], w)
			}
		}
	})
}

// FuzzBoundaries holds the shortcuts to Next: MayEndEvent never says no
// where Next finds an event, however much of it was scanned before, and
// for LF-only streams EventEnd finds the end Next finds.
func FuzzBoundaries(f *testing.F) {
	f.Add([]byte(mlxStream))
	f.Add([]byte("data: a\r\n\r\ndata: b\rdata: c\r\r: c\n\n"))
	f.Add([]byte("data: x\n\ndata: y\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, n, ok := Next(in)
		if ok {
			// A relay skips parsing while MayEndEvent says no, and then
			// counts those bytes as scanned: any such prefix may have been.
			for scanned := 1; scanned < n && !MayEndEvent(in[:scanned], 0); scanned++ {
				if !MayEndEvent(in[:n], scanned) {
					t.Fatalf("Next ends an event at %d in %q, MayEndEvent (scanned %d) says none", n, in, scanned)
				}
			}
		}
		if !ok || len(in) == 0 || in[0] == '\n' || bytes.IndexByte(in, '\r') >= 0 {
			return
		}
		if end := EventEnd('x', in); end != n {
			t.Fatalf("EventEnd %d, Next %d, in %q", end, n, in)
		}
	})
}

// indexLineEnd is bytes.IndexAny(b, "\r\n").
func FuzzIndexLineEnd(f *testing.F) {
	for _, s := range []string{"", "a", "\n", "\r", "ab\r\ncd", "ab\ncd\r", "data: x\r"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := indexLineEnd(b), bytes.IndexAny(b, "\r\n"); got != want {
			t.Fatalf("%q: %d, want %d", b, got, want)
		}
	})
}
