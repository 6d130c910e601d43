package confidence

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

const eps = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) < eps*(1+math.Abs(b)) }

// given builds a logprobs: true value (no lists) from probabilities.
func given(probs ...float64) []byte {
	var b strings.Builder
	b.WriteString(`{"content": [`)
	for i, p := range probs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": %d, "logprob": %v}`, i, math.Log(p))
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func TestScorePureFigures(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		probs                 []float64
		ok                    bool
		ppl, mean, min, std   float64
		lowRatio              float64
		lowResponse           bool
		threshold             float64
		wantTokens, wantGiven int
	}{
		{name: "certain tokens", probs: []float64{1, 1, 1}, ok: true, ppl: 1, mean: 1, min: 1, std: 0, wantTokens: 3, wantGiven: 3},
		{name: "two 50/50 tokens", probs: []float64{.5, .5}, ok: true, ppl: 2, mean: .5, min: .5, std: 0, wantTokens: 2, wantGiven: 2},
		{name: "mean min std", probs: []float64{1, .5}, ok: true, ppl: math.Sqrt(2), mean: .75, min: .5, std: .25, wantTokens: 2, wantGiven: 2},
		{name: "nothing", probs: nil, ok: false},
		// The threshold is strict: 0.5 is not low, 0.49 is.
		{name: "low ratio at the threshold", probs: []float64{.5, .49, .51, 1}, ok: true, ppl: math.Exp(-(math.Log(.5) + math.Log(.49) + math.Log(.51)) / 4), mean: .625, min: .49, std: math.Sqrt((.125*.125 + .135*.135 + .115*.115 + .375*.375) / 4), lowRatio: .25, wantTokens: 4, wantGiven: 4},
		{name: "low response", probs: []float64{.3, .4}, ok: true, ppl: math.Exp(-(math.Log(.3) + math.Log(.4)) / 2), mean: .35, min: .3, std: .05, lowRatio: 1, lowResponse: true, wantTokens: 2, wantGiven: 2},
		{name: "threshold configurable", probs: []float64{.7, .9}, threshold: .75, ok: true, ppl: math.Exp(-(math.Log(.7) + math.Log(.9)) / 2), mean: .8, min: .7, std: .1, lowRatio: .5, wantTokens: 2, wantGiven: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Parse(given(tc.probs...)).Score(Options{LowConfidence: tc.threshold})
			if s.OK != tc.ok || s.Tokens != tc.wantTokens || s.Given != tc.wantGiven {
				t.Fatalf("%+v", s)
			}
			if !tc.ok {
				if s != (Score{}) {
					t.Errorf("an unscored response reports %+v", s)
				}
				return
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"perplexity", s.Perplexity, tc.ppl}, {"mean", s.ConfidenceMean, tc.mean}, {"min", s.ConfidenceMin, tc.min}, {"std", s.ConfidenceStd, tc.std}, {"low ratio", s.LowConfidenceRatio, tc.lowRatio}} {
				if !near(f.got, f.want) {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
			if s.LowConfidence != tc.lowResponse {
				t.Errorf("LowConfidence = %v", s.LowConfidence)
			}
			if s.HasEntropy() || s.HasMargin() {
				t.Errorf("no lists, yet entropy/margin: %+v", s)
			}
		})
	}
}

func cands(probs ...float64) []Candidate {
	out := make([]Candidate, len(probs))
	for i, p := range probs {
		out[i] = Candidate{Logprob: math.Log(p), ID: i}
	}
	return out
}

func TestEntropy(t *testing.T) {
	for _, tc := range []struct {
		name            string
		probs           []float64
		h, bound, mass  float64
		trueH           float64 // of the full distribution, when known
		boundIsTrueHere bool
	}{
		{name: "one-hot", probs: []float64{1, 1e-300}, h: 0, bound: 0, mass: 1},
		{name: "50/50", probs: []float64{.5, .5}, h: math.Ln2, bound: math.Ln2, mass: 1},
		// Truncated: (.4, .4) of (.4, .4, .2). Renormalised: ln 2; with the
		// missing mass: ln 2 + ln 1.25 = ln 2.5; true: 1.0549.
		{name: "truncated", probs: []float64{.4, .4}, h: math.Ln2, bound: math.Log(2.5), mass: .8,
			trueH: -(2*.4*math.Log(.4) + .2*math.Log(.2))},
		// Uniform over 4, two listed: the bound is exact.
		{name: "truncated uniform", probs: []float64{.25, .25}, h: math.Ln2, bound: math.Log(4), mass: .5, trueH: math.Log(4), boundIsTrueHere: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, bound, mass := entropy(cands(tc.probs...))
			if !near(h, tc.h) || !near(bound, tc.bound) || !near(mass, tc.mass) {
				t.Errorf("entropy = %v, %v, %v; want %v, %v, %v", h, bound, mass, tc.h, tc.bound, tc.mass)
			}
			if tc.trueH > 0 && (h > tc.trueH+eps || bound > tc.trueH+eps) {
				t.Errorf("not a lower bound: h %v bound %v true %v", h, bound, tc.trueH)
			}
			if tc.boundIsTrueHere && !near(bound, tc.trueH) {
				t.Errorf("bound %v, true %v", bound, tc.trueH)
			}
		})
	}
}

// entropy does not compute its first term, exp(top − top): it is exactly
// 1 for every finite logprob the parser lets through, so the sum is the
// same to the bit.
func TestEntropyFirstTermIsOne(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	lps := []float64{0, math.Copysign(0, -1), -5e-324, -1e-300, 1e-300, -0.0078125, 0.001, -math.MaxFloat64, math.MaxFloat64}
	for range 10_000 {
		lps = append(lps, -math.Exp(r.NormFloat64()*20))
	}
	for _, lp := range lps {
		top := min(lp, 0)
		if e := math.Exp(min(lp, 0) - top); e != 1 {
			t.Fatalf("exp(%v − %v) = %v", lp, top, e)
		}
	}
}

// The direction of the bounds, checked on random distributions truncated
// to their top-N: renormalised h <= h − ln(mass) <= the true entropy.
func TestEntropyBoundsHoldOnRandomDistributions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20000 {
		v := 2 + r.IntN(60)
		ps := make([]float64, v)
		var sum float64
		for i := range ps {
			// Mix flat and peaked shapes.
			ps[i] = math.Pow(r.Float64(), 1+float64(trial%7)*2)
			sum += ps[i]
		}
		var trueH float64
		for i := range ps {
			ps[i] /= sum
			if ps[i] > 0 {
				trueH -= ps[i] * math.Log(ps[i])
			}
		}
		// top-N, most likely first
		sorted := append([]float64(nil), ps...)
		for i := 1; i < len(sorted); i++ {
			for j := i; j > 0 && sorted[j] > sorted[j-1]; j-- {
				sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
			}
		}
		n := 1 + r.IntN(v)
		var top []float64
		for _, p := range sorted[:n] {
			if p > 0 {
				top = append(top, p)
			}
		}
		if len(top) == 0 {
			continue
		}
		h, bound, _ := entropy(cands(top...))
		if h > bound+1e-12 || bound > trueH+1e-9 {
			t.Fatalf("trial %d: h %v bound %v true %v (N=%d of %d)", trial, h, bound, trueH, n, v)
		}
	}
}

func TestMargin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lists  [][]float64
		margin float64
		tokens int
	}{
		{"dominant token", [][]float64{{.9, .05, .01}}, .85, 1},
		{"coin flip", [][]float64{{.5, .5}}, 0, 1},
		{"mean over tokens", [][]float64{{.9, .05}, {.5, .5}}, .425, 2},
		{"single candidates are skipped", [][]float64{{.9}, {.6, .3}}, .3, 1},
		{"unsorted list is sorted first", [][]float64{{.05, .9, .01}}, .85, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(`{"content": [`)
			for i, l := range tc.lists {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, `{"id": %d, "token": "x", "logprob": %v, "top_logprobs": [`, 100, math.Log(l[0]))
				for k, p := range l {
					if k > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, `{"id": %d, "token": "t%d", "logprob": %v}`, 100+k, k, math.Log(p))
				}
				b.WriteString("]}")
			}
			b.WriteString("]}")
			s := Parse([]byte(b.String())).Score(Options{Greedy: true})
			if s.MarginTokens != tc.tokens || !near(s.MarginMean, tc.margin) {
				t.Errorf("margin %v over %d, want %v over %d", s.MarginMean, s.MarginTokens, tc.margin, tc.tokens)
			}
		})
	}
}

// The greedy pick is the most likely candidate, whatever the outer entry
// says (the argpartition quirk).
func TestGreedyIgnoresOuterEntry(t *testing.T) {
	raw := `{"content": [{"id": 2, "token": "b", "logprob": -2.3, "top_logprobs": [{"id": 2, "token": "b", "logprob": -2.3}, {"id": 1, "token": "a", "logprob": -0.1}]}]}`
	l := Parse([]byte(raw))
	p := l.Identify(Options{Greedy: true})[0]
	if p.Method != MethodGreedy || p.Logprob != -0.1 || l.Tokens[0].Flags&Unsorted == 0 {
		t.Errorf("%+v %+v", p, l.Tokens[0])
	}
	// Without the temperature and the text, the unsorted list's outer entry
	// is not trusted: the most likely candidate is taken, as a fallback.
	p = l.Identify(Options{})[0]
	if p.Method != MethodFallback || p.Logprob != -0.1 {
		t.Errorf("%+v", p)
	}
}
