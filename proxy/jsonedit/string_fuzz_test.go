package jsonedit

import (
	"encoding/json"
	"testing"
)

// AppendString decodes strings by hand for speed; it must read every
// string as encoding/json does (invalid UTF-8 and lone surrogates become
// U+FFFD, bad escapes and raw control characters are refused).
func FuzzAppendStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{`hello`, `\u0120world`, `\ud83d\ude00`, `\ud83d`, `\udc80x`, "\xff\xfe", `\n\t\"\\\/`, `\x`, `\u12`, "a\x01b", `\uD800\uDC00`, `\ud83d\u0041`, `\udc00\ud800`, `\ud83d\uzzzz`, "caf\xc3\xa9", `\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, inner string) {
		if hasBareQuote(inner) {
			return // not one string: SkipValue never hands such a span over
		}
		b := []byte(`"` + inner + `"`)
		got, ok := AppendString(nil, b)
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

// hasBareQuote: s has a quote that no backslash escapes.
func hasBareQuote(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return true
		}
	}
	return false
}
