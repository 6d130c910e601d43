package confidence

import (
	"encoding/json"
	"strings"
	"testing"
)

// appendString decodes a string with escapes by goccy/go-json for speed;
// it must read it as encoding/json does (invalid UTF-8 and lone surrogates
// become U+FFFD, bad escapes are refused). A string without a backslash or
// control character is copied as it is, and is not compared here.
func FuzzAppendStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{`hello`, `\u0120world`, `\ud83d\ude00`, `\ud83d`, `\udc80x`, "\xff\xfe", `\n\t\"\\\/`, `\x`, `\u12`, "a\x01b", `\uD800\uDC00`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, inner string) {
		if !strings.ContainsFunc(inner, func(r rune) bool { return r == '\\' || r < 0x20 }) {
			return
		}
		b := []byte(`"` + inner + `"`)
		got, ok := appendString(nil, b)
		var want string
		wantOK := json.Unmarshal(b, &want) == nil
		if ok != wantOK {
			t.Fatalf("%q: appendString ok=%v, encoding/json ok=%v", b, ok, wantOK)
		}
		if ok && string(got) != want {
			t.Fatalf("%q: appendString %q, encoding/json %q", b, got, want)
		}
	})
}
