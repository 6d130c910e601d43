package confidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// The simulated mlx_lm.server reproduces the argpartition quirk: with
// top_logprobs the outer entry is a copy of a shuffled list's first member.
// Asking the same question with logprobs: true alone gives the sampled
// tokens' own logprobs (same seed, prompt and temperature: same output),
// which is the truth the identification is held to.

type sim struct {
	t   testing.TB
	srv *httptest.Server
}

func newSim(t testing.TB) *sim {
	t.Helper()
	e := mlxsim.New(mlxsim.Options{
		PrefillTPS: 1e7, DecodeTPS: 1e7, Seed: 7,
		// argpartition's undefined order (MLX's CPU path); on Apple GPUs
		// the list comes sorted, which needs no identification.
		UnsortedTopLogprobs: true,
		Now:                 func() time.Time { return time.Unix(1755000000, 0) },
	}, io.Discard)
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { e.Close(); srv.Close() })
	return &sim{t: t, srv: srv}
}

func (s *sim) post(body string) []byte {
	s.t.Helper()
	resp, err := http.Post(s.srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		s.t.Fatalf("%d %s for %s", resp.StatusCode, b, body)
	}
	return b
}

// simChoice is what a proxy reads of a non-streamed answer.
type simChoice struct {
	Logprobs json.RawMessage `json:"logprobs"`
	Message  struct {
		Content   *string `json:"content"`
		Reasoning *string `json:"reasoning"`
		ToolCalls []struct {
			Function struct{ Name, Arguments string }
		} `json:"tool_calls"`
	} `json:"message"`
}

func choiceOf(t testing.TB, body []byte) simChoice {
	t.Helper()
	var r struct{ Choices []simChoice }
	if err := json.Unmarshal(body, &r); err != nil || len(r.Choices) != 1 {
		t.Fatalf("%v: %s", err, body)
	}
	return r.Choices[0]
}

// text is what the proxy passes as Options.Text: reasoning, then content.
func (c simChoice) text() string {
	s := ""
	if c.Message.Reasoning != nil {
		s += *c.Message.Reasoning
	}
	if c.Message.Content != nil {
		s += *c.Message.Content
	}
	for _, tc := range c.Message.ToolCalls {
		s += ToolCallText(tc.Function.Name, tc.Function.Arguments)
	}
	return s
}

func chatBody(prompt string, temperature float64, extra string) string {
	return fmt.Sprintf(`{"messages": [{"role": "user", "content": %q}], "temperature": %v, "max_tokens": 400%s}`, prompt, temperature, extra)
}

var simPrompts = []struct{ prompt, extra string }{
	{"Hello, how are you today?", ""},
	{"Tell me a long story about the sea.", ""},
	{"Explain entropy to a child.", `, "chat_template_kwargs": {"enable_thinking": true}`},
	{"What is the weather in Paris? Use get_weather.", `, "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]`},
	{"Write three sentences about bread.", ""},
}

// truth returns the sampled tokens' logprobs for a request.
func (s *sim) truth(prompt string, temp float64, extra string) []float64 {
	c := choiceOf(s.t, s.post(chatBody(prompt, temp, extra+`, "logprobs": true`)))
	l := Parse(c.Logprobs)
	out := make([]float64, len(l.Tokens))
	for i, tk := range l.Tokens {
		if tk.Flags&NoTopList == 0 || !tk.HasOuter() {
			s.t.Fatalf("logprobs: true entry %d: %+v", i, tk)
		}
		out[i] = tk.Outer.Logprob
	}
	return out
}

func TestSimArgpartitionQuirkIdentified(t *testing.T) {
	s := newSim(t)
	for _, temp := range []float64{0, 0.7, 1.5} {
		for _, n := range []int{2, 3, 5} {
			for _, p := range simPrompts {
				want := s.truth(p.prompt, temp, p.extra)
				c := choiceOf(t, s.post(chatBody(p.prompt, temp, p.extra+fmt.Sprintf(`, "logprobs": true, "top_logprobs": %d`, n))))
				l := Parse(c.Logprobs)
				if len(l.Tokens) != len(want) {
					t.Fatalf("%d tokens, want %d", len(l.Tokens), len(want))
				}
				picks := l.Identify(Options{Greedy: temp == 0, Text: c.text()})
				wrong, outerWrong, fallbacks := 0, 0, 0
				for i, pk := range picks {
					if pk.Method == MethodFallback {
						fallbacks++
					}
					if pk.Logprob != want[i] {
						wrong++
						if pk.Method == MethodText || pk.Method == MethodGreedy {
							t.Errorf("T=%v N=%d %q token %d: %s pick %v, sampled %v; token %+v", temp, n, p.prompt, i, pk.Method, pk.Logprob, want[i], l.Tokens[i])
						}
					}
					if l.Tokens[i].Outer.Logprob != want[i] {
						outerWrong++
					}
				}
				// Every sampled token is in the simulator's top-2, and the
				// text (with the tool calls) spells all but the added tokens.
				if wrong > 0 {
					t.Errorf("T=%v N=%d %q: %d/%d wrong (%d fallbacks)", temp, n, p.prompt, wrong, len(want), fallbacks)
				}
				if n > 1 && len(want) > 20 && outerWrong == 0 {
					t.Errorf("T=%v N=%d %q: the outer entry was always right: the quirk is not reproduced", temp, n, p.prompt)
				}
				t.Logf("T=%v N=%d %-45q tokens %3d wrong %d fallbacks %2d; the outer entry was wrong for %3d", temp, n, p.prompt, len(want), wrong, fallbacks, outerWrong)
			}
		}
	}
}

// The score from the quirky layout equals the score from the true sampled
// logprobs wherever the identification is exact.
func TestSimScoreMatchesTruth(t *testing.T) {
	s := newSim(t)
	p := simPrompts[1]
	for _, temp := range []float64{0, 1} {
		want := s.truth(p.prompt, temp, p.extra)
		var sum float64
		for _, lp := range want {
			sum += lp
		}
		c := choiceOf(t, s.post(chatBody(p.prompt, temp, p.extra+`, "top_logprobs": 5`)))
		sc := Parse(c.Logprobs).Score(Options{Greedy: temp == 0, Text: c.text()})
		if !sc.OK || sc.Tokens != len(want) {
			t.Fatalf("%+v", sc)
		}
		ppl := math.Exp(-sum / float64(len(want)))
		if d := math.Abs(sc.Perplexity-ppl) / ppl; d > 0.02 {
			t.Errorf("T=%v perplexity %v, truth %v", temp, sc.Perplexity, ppl)
		}
		if !sc.HasEntropy() || !sc.HasMargin() || sc.EntropyBoundMean < sc.EntropyMean {
			t.Errorf("%+v", sc)
		}
	}
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)

// Injected and stripped, the answer is byte for byte the answer to the
// client's own request (ids aside: mlx_lm draws them at random).
func TestSimInjectStripByteForByte(t *testing.T) {
	// Two engines see the same sequence of requests, so their prompt
	// caches (usage.prompt_tokens_details.cached_tokens) stay in step.
	s, s2 := newSim(t), newSim(t)
	for _, p := range simPrompts {
		for _, temp := range []float64{0, 0.8} {
			for _, body := range []string{
				chatBody(p.prompt, temp, p.extra),
				chatBody(p.prompt, temp, p.extra+`, "logprobs": false`),
				chatBody(p.prompt, temp, p.extra+`, "top_logprobs": -1, "logprobs": false`),
			} {
				plain := s.post(body)
				inj, changed, err := InjectLogprobs([]byte(body), 4)
				if err != nil || !changed {
					t.Fatalf("inject %s: %v %v", body, changed, err)
				}
				got := s2.post(string(inj))
				if !bytes.Contains(got, []byte(`"logprobs": {"content": [{"id": `)) {
					t.Fatalf("no logprobs after injection: %.300s", got)
				}
				stripped, err := StripLogprobs(got)
				if err != nil {
					t.Fatal(err)
				}
				a, b := uuidRE.ReplaceAll(plain, []byte("U")), uuidRE.ReplaceAll(stripped, []byte("U"))
				if !bytes.Equal(a, b) {
					t.Errorf("stripped differs for %s:\n%s\n%s", body, a, b)
				}
			}
		}
	}
}

// What the client asked for is left alone.
func TestSimClientAskedUnchanged(t *testing.T) {
	for _, body := range []string{
		chatBody("hi", 0, `, "logprobs": true`),
		chatBody("hi", 0, `, "top_logprobs": 3`),
		chatBody("hi", 0, `, "logprobs": false, "top_logprobs": 2`),
	} {
		out, changed, err := InjectLogprobs([]byte(body), 4)
		if err != nil || changed || string(out) != body {
			t.Errorf("%s: %s %v %v", body, out, changed, err)
		}
	}
}

// decodeByteLevel turns a byte-level BPE piece into its text.
func decodeByteLevel(piece string) string {
	var b []byte
	for _, r := range piece {
		if int(r) >= len(byteLevel) || byteLevel[r] < 0 {
			return piece // an added token, spelled as it is
		}
		b = append(b, byte(byteLevel[r]))
	}
	return string(b)
}

// An engine that returns logprobs as OpenAI does (decoded text, bytes,
// sorted lists, the outer entry the sampled token) is scored the same way
// and gets the same figures. The simulator's answer is rewritten into that
// layout, with the true sampled tokens from logprobs: true.
func TestSimOpenAIConformantLayout(t *testing.T) {
	s := newSim(t)
	for _, p := range simPrompts {
		for _, temp := range []float64{0, 1} {
			truthBody := choiceOf(t, s.post(chatBody(p.prompt, temp, p.extra+`, "logprobs": true`)))
			truth := Parse(truthBody.Logprobs)
			c := choiceOf(t, s.post(chatBody(p.prompt, temp, p.extra+`, "top_logprobs": 3`)))
			quirky := Parse(c.Logprobs)
			type oc struct {
				Token   string  `json:"token"`
				Logprob float64 `json:"logprob"`
				Bytes   []int   `json:"bytes"`
			}
			type oe struct {
				oc
				Top []oc `json:"top_logprobs"`
			}
			conv := func(tok string, lp float64) oc {
				text := decodeByteLevel(tok)
				bs := []int{}
				for _, b := range []byte(text) {
					bs = append(bs, int(b))
				}
				return oc{text, lp, bs}
			}
			var entries []oe
			for i, tk := range quirky.Tokens {
				var e oe
				for _, cd := range tk.Candidates { // already sorted
					e.Top = append(e.Top, conv(cd.Token, cd.Logprob))
					if cd.ID == truth.Tokens[i].Outer.ID {
						e.oc = conv(cd.Token, cd.Logprob)
					}
				}
				entries = append(entries, e)
			}
			raw, _ := json.Marshal(map[string]any{"content": entries})
			openai := Parse(raw).Score(Options{Greedy: temp == 0, Text: c.text()})
			want := truth.Score(Options{})
			if openai.Tokens != want.Tokens || math.Abs(openai.Perplexity-want.Perplexity) > 1e-9 || math.Abs(openai.ConfidenceMean-want.ConfidenceMean) > 1e-9 {
				t.Errorf("%q T=%v: OpenAI layout %+v, truth %+v", p.prompt, temp, openai, want)
			}
			// The argpartition layout, identified, gives the same figures.
			mlx := quirky.Score(Options{Greedy: temp == 0, Text: c.text()})
			if math.Abs(mlx.Perplexity-want.Perplexity) > 1e-9 || math.Abs(mlx.ConfidenceMin-want.ConfidenceMin) > 1e-9 || mlx.MarginMean != openai.MarginMean {
				t.Errorf("%q T=%v: mlx layout %+v, truth %+v", p.prompt, temp, mlx, want)
			}
		}
	}
}
