package confidence

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

var benchWords = strings.Fields("the a model token answer sea ocean wave ship harbour light night morning value cache result memory step plan reason . , and to of is")

// synth builds an mlx_lm-shaped non-streamed response of n tokens with
// top-N lists in a shuffled (argpartition) order, the way server.py
// writes it, and returns it with its logprobs value and its text.
func synth(n, topN int, seed uint64) (resp, lp []byte, text string) {
	r := rand.New(rand.NewPCG(seed, 1))
	var lb, tb strings.Builder
	lb.WriteString(`{"content": [`)
	for i := range n {
		words := r.Perm(len(benchWords))[:topN]
		lps := make([]float64, topN)
		p := 0.5 + 0.5*r.Float64()
		lps[0] = bf16(math.Log(p))
		for k := 1; k < topN; k++ {
			lps[k] = bf16(math.Log((1 - p) / float64(k+1)))
		}
		sampled := 0
		if r.Float64() < 0.2 {
			sampled = 1
		}
		w := benchWords[words[sampled]]
		if i > 0 && w != "." && w != "," {
			tb.WriteString(" ")
		}
		tb.WriteString(w)
		order := r.Perm(topN)
		if i > 0 {
			lb.WriteString(", ")
		}
		piece := func(k int) string {
			s := benchWords[words[k]]
			if k == sampled && (i == 0 || s == "." || s == ",") {
				return s
			}
			return "Ġ" + s
		}
		first := order[0]
		fmt.Fprintf(&lb, `{"id": %d, "token": %q, "logprob": %s, "top_logprobs": [`, words[first], piece(first), strconv.FormatFloat(lps[first], 'g', -1, 64))
		for j, k := range order {
			if j > 0 {
				lb.WriteString(", ")
			}
			fmt.Fprintf(&lb, `{"id": %d, "token": %q, "logprob": %s}`, words[k], piece(k), strconv.FormatFloat(lps[k], 'g', -1, 64))
		}
		lb.WriteString("]}")
	}
	lb.WriteString("]}")
	text = tb.String()
	q := strconv.Quote(text)
	resp = []byte(`{"id": "chatcmpl-1", "system_fingerprint": "fp", "object": "chat.completion", "model": "m", "created": 1, "choices": [{"index": 0, "finish_reason": "stop", "logprobs": ` +
		lb.String() + `, "message": {"role": "assistant", "content": ` + q + `}}], "usage": {"prompt_tokens": 10, "completion_tokens": ` + strconv.Itoa(n) + `, "total_tokens": ` + strconv.Itoa(n+10) + `}}`)
	return resp, []byte(lb.String()), text
}

// bf16 rounds like MLX's bfloat16 logits, which Python prints short
// (-0.0078125, -2.359375).
func bf16(x float64) float64 {
	bits := math.Float32bits(float32(x))
	bits += 0x7fff + (bits>>16)&1
	return float64(math.Float32frombits(bits &^ 0xffff))
}

func TestSynthIsScoredExactly(t *testing.T) {
	_, lp, text := synth(300, 5, 3)
	s := Parse(lp).Score(Options{Text: text})
	if s.Tokens != 300 || s.ByText != 300 {
		t.Fatalf("%+v", s)
	}
}

func BenchmarkScore1000TokensTop5(b *testing.B) {
	_, lp, text := synth(1000, 5, 1)
	for _, bc := range []struct {
		name string
		opt  Options
	}{{"text walk", Options{Text: text}}, {"greedy", Options{Greedy: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(lp)))
			b.ReportAllocs()
			for b.Loop() {
				s := Parse(lp).Score(bc.opt)
				if s.Tokens != 1000 {
					b.Fatal(s.Tokens)
				}
			}
		})
	}
	b.Run("parse only", func(b *testing.B) {
		b.SetBytes(int64(len(lp)))
		b.ReportAllocs()
		for b.Loop() {
			Parse(lp)
		}
	})
}

func BenchmarkRewrite100kB(b *testing.B) {
	n := 200
	resp, _, _ := synth(n, 5, 2) // ~100 kB, almost all logprobs
	for len(resp) < 100_000 {
		n += 10
		resp, _, _ = synth(n, 5, 2)
	}
	content := strings.Repeat("lorem ipsum ", 100_000/12)
	req := []byte(`{"model": "m", "messages": [{"role": "user", "content": "` + content + `"}], "max_tokens": 512, "stream": false}`)
	b.Run(fmt.Sprintf("inject %d B request", len(req)), func(b *testing.B) {
		b.SetBytes(int64(len(req)))
		b.ReportAllocs()
		for b.Loop() {
			if _, changed, err := InjectLogprobs(req, 5); !changed || err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("strip %d B response", len(resp)), func(b *testing.B) {
		b.SetBytes(int64(len(resp)))
		b.ReportAllocs()
		for b.Loop() {
			if out, err := StripLogprobs(resp); err != nil || len(out) == len(resp) {
				b.Fatal(err)
			}
		}
	})
}
