package jsonlexporter

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAppendString: every string comes back from encoding/json as it went
// in (invalid UTF-8 as U+FFFD, as encoding/json writes it).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\\n\r\t\x00\x1f", "é ☃ 𝄞", "\xff\xfe", "\u2028", "\x1b[33m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		if !json.Valid(b) {
			t.Fatalf("not JSON: %q", b)
		}
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if !utf8.ValidString(s) {
			// encoding/json replaces each invalid byte, ToValidUTF8 each run.
			want = string([]rune(s))
		}
		if back != want {
			t.Fatalf("%q came back as %q, want %q", s, back, want)
		}
	})
}
