package mlxsim

import "testing"

func TestTokenizer(t *testing.T) {
	text := "<|im_start|>user\nHello, it's 2026 — isn't it?\n\n  Done.<|im_end|>"
	toks := tokenize(text)
	var joined string
	var pieces []string
	for _, tk := range toks {
		joined += tk.text
		pieces = append(pieces, tk.text)
	}
	if joined != text {
		t.Fatalf("tokenization is lossy: %q", joined)
	}
	want := []string{"<|im_start|>", "user", "\n", "Hello", ",", " it", "'s", " ", "2", "0", "2", "6", " —", " isn", "'t", " it", "?\n\n", " ", " Done", ".", "<|im_end|>"}
	if len(pieces) != len(want) {
		t.Fatalf("pieces %q\nwant   %q", pieces, want)
	}
	for i := range want {
		if pieces[i] != want[i] {
			t.Fatalf("pieces %q\nwant   %q", pieces, want)
		}
	}
	if toks[0].id != 151644 || toks[len(toks)-1].id != 151645 {
		t.Errorf("special ids %d %d", toks[0].id, toks[len(toks)-1].id)
	}
	if bpeToken(token{pieceID(" Done"), " Done"}) != "ĠDone" || bpeToken(token{pieceID("\n"), "\n"}) != "Ċ" {
		t.Errorf("byte-level spelling")
	}
	if tokenize(" word")[0].id != tokenize("a word")[1].id {
		t.Errorf("ids are not stable per piece")
	}
}
