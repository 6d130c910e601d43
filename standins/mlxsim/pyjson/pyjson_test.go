package pyjson

import (
	"math"
	"testing"
)

// Expected values were produced by CPython's json module.

func TestLoadsErrorsMatchPython(t *testing.T) {
	cases := map[string]string{
		"":                    "Expecting value: line 1 column 1 (char 0)",
		" ":                   "Expecting value: line 1 column 2 (char 1)",
		"{":                   "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
		"[":                   "Expecting value: line 1 column 2 (char 1)",
		`{"a"`:                "Expecting ':' delimiter: line 1 column 5 (char 4)",
		`{"a":`:               "Expecting value: line 1 column 6 (char 5)",
		`{"a":1`:              "Expecting ',' delimiter: line 1 column 7 (char 6)",
		`{"a":1,`:             "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
		`{"a":1,}`:            "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
		`[1,]`:                "Expecting value: line 1 column 4 (char 3)",
		`[1 2]`:               "Expecting ',' delimiter: line 1 column 4 (char 3)",
		`{"a" 1}`:             "Expecting ':' delimiter: line 1 column 6 (char 5)",
		`{1:2}`:               "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
		"nul":                 "Expecting value: line 1 column 1 (char 0)",
		"01":                  "Extra data: line 1 column 2 (char 1)",
		"1.":                  "Extra data: line 1 column 2 (char 1)",
		"-":                   "Expecting value: line 1 column 1 (char 0)",
		"1e+":                 "Extra data: line 1 column 2 (char 1)",
		`"abc`:                "Unterminated string starting at: line 1 column 1 (char 0)",
		`"a\x"`:               `Invalid \escape: line 1 column 3 (char 2)`,
		`"\u12"`:              `Invalid \uXXXX escape: line 1 column 3 (char 2)`,
		`"\u12g4"`:            `Invalid \uXXXX escape: line 1 column 3 (char 2)`,
		"\"a\nb\"":            "Invalid control character at: line 1 column 3 (char 2)",
		`{"a":1}x`:            "Extra data: line 1 column 8 (char 7)",
		"\ufeff{}":            "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
		"[\n1,\n2\n":          "Expecting ',' delimiter: line 4 column 1 (char 7)",
		`{"a": [1, {"b": }]}`: "Expecting value: line 1 column 17 (char 16)",
		`{"é": x}`:            "Expecting value: line 1 column 7 (char 6)",
	}
	for in, want := range cases {
		_, err := Loads(in)
		if err == nil || err.Error() != want {
			t.Errorf("Loads(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestLoadsValues(t *testing.T) {
	cases := map[string]string{
		`  {"a":1} `:                      `{"a": 1}`,
		"NaN":                             "NaN",
		"[1, 2, -Infinity]":               "[1, 2, -Infinity]",
		`{"a":"\ud800"}`:                  `{"a": "\ud800"}`,
		`"\ud83d\ude00"`:                  `"\ud83d\ude00"`,
		"1e999":                           "Infinity",
		"-0":                              "0",
		"-0.0":                            "-0.0",
		"123456789012345678901234567890":  "123456789012345678901234567890",
		`{"a":1,"b":2,"a":3}`:             `{"a": 3, "b": 2}`,
		"[1e5, 1E-5, 2.50, 0.1]":          "[100000.0, 1e-05, 2.5, 0.1]",
		`"é"`:                             `"\u00e9"`,
		`{"z": true, "a": null, "m": []}`: `{"z": true, "a": null, "m": []}`,
	}
	for in, want := range cases {
		v, err := Loads(in)
		if err != nil {
			t.Errorf("Loads(%q): %v", in, err)
			continue
		}
		if got := Dumps(v); got != want {
			t.Errorf("json.dumps(json.loads(%q)) = %s, want %s", in, got, want)
		}
	}
	// Python types survive: 5 is an int, 5.0 a float, true a bool.
	v, _ := Loads(`[5, 5.0, true]`)
	l := v.([]any)
	if _, ok := l[0].(Int); !ok {
		t.Errorf("5 decoded as %T", l[0])
	}
	if _, ok := l[1].(float64); !ok {
		t.Errorf("5.0 decoded as %T", l[1])
	}
	if _, err := Loads(repeat("[", 2000)); err == nil || err.Error() != "maximum recursion depth exceeded while decoding a JSON array from a unicode string" {
		t.Errorf("deep nesting: %v", err)
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for i := 0; i < n; i++ {
		b = append(b, s...)
	}
	return string(b)
}

func TestFloatRepr(t *testing.T) {
	cases := map[float64]string{
		1.0: "1.0", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0",
		1234567890123456.0: "1234567890123456.0", 0.0001: "0.0001", 0.00001: "1e-05",
		1.5e-05: "1.5e-05", -0.00390625: "-0.00390625", -2.384185791015625e-07: "-2.384185791015625e-07",
		1e22: "1e+22", 123.456: "123.456", 5e-324: "5e-324", 1.7976931348623157e308: "1.7976931348623157e+308",
		0.30000000000000004: "0.30000000000000004",
	}
	for f, want := range cases {
		if got := FloatRepr(f); got != want {
			t.Errorf("repr(%v) = %s, want %s", f, got, want)
		}
	}
	if got := FloatRepr(math.Copysign(0, -1)); got != "-0.0" {
		t.Errorf("repr(-0.0) = %s", got)
	}
}

func TestDumpsLikePython(t *testing.T) {
	got := Dumps(NewDict("a", "é😀\u007f\x01<>&\"\\/", "b", []any{1, 2.0, nil, true}, "c", NewDict()))
	want := `{"a": "\u00e9\ud83d\ude00\u007f\u0001<>&\"\\/", "b": [1, 2.0, null, true], "c": {}}`
	if got != want {
		t.Errorf("dumps:\n got %s\nwant %s", got, want)
	}
	got = DumpsIndent(NewDict("a", []any{1, NewDict("b", []any{})}, "c", NewDict()), "\t")
	want = "{\n\t\"a\": [\n\t\t1,\n\t\t{\n\t\t\t\"b\": []\n\t\t}\n\t],\n\t\"c\": {}\n}"
	if got != want {
		t.Errorf("indent:\n got %q\nwant %q", got, want)
	}
	if got := DumpsNoASCII("é😀\x01"); got != "\"é😀\\u0001\"" {
		t.Errorf("ensure_ascii=False: %s", got)
	}
}

func TestUTF8DecodeErrorsMatchPython(t *testing.T) {
	cases := map[string]string{
		"\xff":                "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
		"ab\xe4\xb8x":         "'utf-8' codec can't decode bytes in position 2-3: invalid continuation byte",
		"\xe4x":               "'utf-8' codec can't decode byte 0xe4 in position 0: invalid continuation byte",
		"abc\xe4\xb8":         "'utf-8' codec can't decode bytes in position 3-4: unexpected end of data",
		"\xed\xa0\x80":        "'utf-8' codec can't decode byte 0xed in position 0: invalid continuation byte",
		"\xc0\xaf":            "'utf-8' codec can't decode byte 0xc0 in position 0: invalid start byte",
		"\xf0\x9f\x98":        "'utf-8' codec can't decode bytes in position 0-2: unexpected end of data",
		"ok \xf0\x9f\x98\x80": "",
	}
	for in, want := range cases {
		_, err := DecodeUTF8([]byte(in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("decode(%q) = %q, want %q", in, got, want)
		}
	}
}
