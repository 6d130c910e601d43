package mlxsim

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

// Log-probabilities. For every generated token the simulator draws a
// plausible next-token distribution: the sampled token and ten alternatives
// (other vocabulary words). Most tokens are confident (p 0.9–0.9999), some
// less so (0.5–0.9) and a few uncertain (0.2–0.5); the remaining mass decays
// geometrically over the alternatives. Values are rounded to bfloat16, the
// dtype MLX models compute logits in, so they look like -0.00390625.
//
// At temperature 0 the sampled token is the most likely one. At temperature
// > 0 it is sometimes the second.
//
// Output follows server.py:
//   - logprobs: true (and top_logprobs <= 0): {"content": [{"id", "logprob"}]}
//     with the sampled token's logprob;
//   - top_logprobs: N > 0 (with or without logprobs): _format_top_logprobs
//     takes mx.argpartition(-logprobs, kth=N-1)[:N], the N most likely
//     tokens in an order MLX calls undefined (simulated by a seeded
//     shuffle), and each content entry is dict(top[0], top_logprobs=top):
//     the outer id/token/logprob are those of whatever came first, not
//     necessarily the sampled or the most likely token.
//   - never in streamed chunks.

func bf16(x float64) float64 {
	f := float32(x)
	bits := math.Float32bits(f)
	bits += 0x7fff + ((bits >> 16) & 1)
	bits &= 0xffff0000
	return float64(math.Float32frombits(bits))
}

var altWords = func() []string {
	var out []string
	for _, l := range [][]string{determiners, adjectives, nouns, verbs, adverbs, preps} {
		for _, w := range l {
			out = append(out, " "+w)
		}
	}
	return append(out, ".", ",", "\n\n", " and", " to", " of", " is")
}()

func sampleDistribution(r *rand.Rand, sampled token, temperature float64) genTok {
	var pTop float64
	switch u := r.Float64(); {
	case u < 0.70:
		pTop = 0.9 + 0.0999*r.Float64()
	case u < 0.95:
		pTop = 0.5 + 0.4*r.Float64()
	default:
		pTop = 0.2 + 0.3*r.Float64()
	}
	q := 0.3 + 0.4*r.Float64()
	rest := 1 - pTop
	probs := make([]float64, 11)
	probs[0] = pTop
	norm := (1 - math.Pow(q, 10)) / (1 - q)
	for k := 1; k < 11; k++ {
		probs[k] = rest * math.Pow(q, float64(k-1)) / norm
	}
	// Keep the sampled token the most likely one; the vocabulary's long tail
	// takes the mass this removes.
	if probs[1] > 0.9*pTop {
		f := 0.9 * pTop / probs[1]
		for k := 1; k < 11; k++ {
			probs[k] *= f
		}
	}
	used := map[int]bool{sampled.id: true}
	alts := make([]topEntry, 0, 11)
	alts = append(alts, topEntry{sampled, 0})
	for len(alts) < 11 {
		w := altWords[r.IntN(len(altWords))]
		t := token{pieceID(w), w}
		if used[t.id] {
			continue
		}
		used[t.id] = true
		alts = append(alts, topEntry{t, 0})
	}
	for k := range alts {
		alts[k].lp = bf16(math.Log(probs[k]))
	}
	// At temperature > 0 the sampler sometimes takes the runner-up.
	if temperature > 0 && r.Float64() < math.Min(0.5, (1-pTop)*temperature*2) {
		alts[0], alts[1] = alts[1], alts[0]
		alts[0].lp, alts[1].lp = alts[1].lp, alts[0].lp
	}
	sampledLP := 0.0
	for _, a := range alts {
		if a.tok.id == sampled.id {
			sampledLP = a.lp
		}
	}
	sort.SliceStable(alts, func(i, j int) bool { return alts[i].lp > alts[j].lp })
	return genTok{tok: sampled, lp: sampledLP, alts: alts, perm: r.Uint64()}
}

// formatTopLogprobs is _format_top_logprobs(logprobs, n, tokenizer). The
// N entries come from mx.argpartition(-logprobs, kth=N-1)[:N] (mlx_lm
// v0.31.3 server.py, _format_top_logprobs). On Apple GPUs argpartition is a full sort ("We direct arg
// partition to sort for now", mlx 846d17622 mlx/backend/metal/sort.cpp,
// ArgPartition::eval_gpu): most likely first, as here by default. unsorted gives the
// order MLX documents (undefined; its CPU path): a seeded shuffle.
func formatTopLogprobs(g genTok, n int, unsorted bool) []any {
	if n <= 0 {
		return nil
	}
	if n > len(g.alts) {
		n = len(g.alts)
	}
	top := append([]topEntry(nil), g.alts[:n]...)
	if unsorted {
		r := rand.New(rand.NewPCG(g.perm, uint64(n)))
		r.Shuffle(len(top), func(i, j int) { top[i], top[j] = top[j], top[i] })
	}
	out := make([]any, n)
	for i, t := range top {
		out[i] = pyjson.NewDict("id", t.tok.id, "token", bpeToken(t.tok), "logprob", t.lp)
	}
	return out
}

// logprobsContent builds choices[0]["logprobs"] the way generate_response
// does, or returns nil when it adds none.
func logprobsContent(toks []genTok, logprobs bool, topN int, unsorted bool) *pyjson.Dict {
	if topN > 0 && len(toks) > 0 {
		content := make([]any, len(toks))
		for i, g := range toks {
			top := formatTopLogprobs(g, topN, unsorted)
			if len(top) == 0 {
				content[i] = pyjson.NewDict()
				continue
			}
			first := top[0].(*pyjson.Dict)
			entry := first.Copy()
			entry.Set("top_logprobs", top)
			content[i] = entry
		}
		return pyjson.NewDict("content", content)
	}
	if logprobs && len(toks) > 0 {
		content := make([]any, len(toks))
		for i, g := range toks {
			content[i] = pyjson.NewDict("id", g.tok.id, "logprob", g.lp)
		}
		return pyjson.NewDict("content", content)
	}
	return nil
}
