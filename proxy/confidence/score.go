package confidence

import "math"

// Score is the confidence summary of one response. What each field is
// computed from, and where it is a bound, is in README.md.
type Score struct {
	// OK: at least one token was scored; when false report nothing.
	OK bool
	// Tokens is how many generated tokens have a sampled logprob.
	Tokens int

	// Perplexity is exp(−mean sampled logprob): 1 when every token was
	// certain (mlx_output_perplexity).
	Perplexity float64
	// Confidence is the sampled token's probability, over the scored
	// tokens (mlx_token_confidence_mean/_min/_std; population std).
	ConfidenceMean, ConfidenceMin, ConfidenceStd float64
	// LowConfidenceRatio is the share of scored tokens whose confidence is
	// strictly below the threshold (mlx_low_confidence_token_ratio).
	LowConfidenceRatio float64
	// LowConfidence: ConfidenceMean is strictly below the threshold
	// (mlx_low_confidence_response_total).
	LowConfidence bool

	// MarginMean is the mean top-1 minus top-2 probability over the
	// MarginTokens tokens with two or more candidates (mlx_token_margin_mean).
	MarginMean   float64
	MarginTokens int
	// EntropyMean is the mean entropy (nats) of the top-N lists
	// renormalised to sum to 1, over the EntropyTokens tokens with two or
	// more candidates: a lower bound of the true entropy
	// (mlx_token_entropy_nats). EntropyBoundMean adds −ln(top-N mass) per
	// token: still a lower bound, and a tighter one. TopMassMean is the mean
	// probability mass the top-N lists cover.
	EntropyMean, EntropyBoundMean, TopMassMean float64
	EntropyTokens                              int

	// How the sampled tokens were found (counts of Method), and tokens
	// with nothing usable.
	Given, Greedy, ByText, Fallbacks, Unscored int
}

// HasMargin and HasEntropy report whether those figures exist (the
// logprobs: true layout has no top-N lists).
func (s *Score) HasMargin() bool  { return s.MarginTokens > 0 }
func (s *Score) HasEntropy() bool { return s.EntropyTokens > 0 }

// Score identifies the sampled tokens and summarises them.
func (l *Logprobs) Score(opt Options) Score {
	return l.ScorePicks(l.Identify(opt), opt)
}

// ScorePicks summarises picks made by Identify (for callers that also want
// the per-token picks).
func (l *Logprobs) ScorePicks(picks []Pick, opt Options) Score {
	threshold := opt.LowConfidence
	if threshold == 0 {
		threshold = DefaultLowConfidence
	}
	var s Score
	var sumLP, mean, m2 float64 // Welford's running mean and squares
	low := 0
	s.ConfidenceMin = 1
	for i, p := range picks {
		switch p.Method {
		case MethodNone:
			s.Unscored++
			continue
		case MethodGiven:
			s.Given++
		case MethodGreedy:
			s.Greedy++
		case MethodText:
			s.ByText++
		case MethodFallback:
			s.Fallbacks++
		}
		lp := min(p.Logprob, 0) // bf16 rounding can give a hair above 0
		prob := math.Exp(lp)
		s.Tokens++
		sumLP += lp
		d := prob - mean
		mean += d / float64(s.Tokens)
		m2 += d * (prob - mean)
		s.ConfidenceMin = min(s.ConfidenceMin, prob)
		if prob < threshold {
			low++
		}
		if i < len(l.Tokens) {
			s.addList(l.Tokens[i].Candidates)
		}
	}
	if s.Tokens == 0 {
		return Score{Unscored: s.Unscored}
	}
	n := float64(s.Tokens)
	s.OK = true
	s.Perplexity = perplexity(sumLP, s.Tokens)
	s.ConfidenceMean = mean
	s.ConfidenceStd = math.Sqrt(max(0, m2/n))
	s.LowConfidenceRatio = float64(low) / n
	s.LowConfidence = s.ConfidenceMean < threshold
	if s.MarginTokens > 0 {
		s.MarginMean /= float64(s.MarginTokens)
	}
	if s.EntropyTokens > 0 {
		m := float64(s.EntropyTokens)
		s.EntropyMean /= m
		s.EntropyBoundMean /= m
		s.TopMassMean /= m
	}
	return s
}

// addList adds one token's top-N list to the margin and entropy sums.
func (s *Score) addList(cs []Candidate) {
	if len(cs) < 2 {
		return
	}
	s.MarginTokens++
	s.MarginMean += margin(cs[0].Logprob, cs[1].Logprob)
	h, bound, mass := entropy(cs)
	s.EntropyTokens++
	s.EntropyMean += h
	s.EntropyBoundMean += bound
	s.TopMassMean += mass
}

// perplexity is exp(−sum/n); n == 0 has none (0).
func perplexity(sumLP float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return math.Exp(-sumLP / float64(n))
}

// margin is p1 − p2 for logprobs lp1 >= lp2.
func margin(lp1, lp2 float64) float64 {
	return max(0, math.Exp(min(lp1, 0))-math.Exp(min(lp2, 0)))
}

// entropy of a top-N list (most likely first): h is the entropy of the
// list renormalised to sum to 1; bound is h − ln(mass), mass the list's
// total probability. Both are lower bounds of the full distribution's
// entropy H (README.md has the proof): with m the mass, q the renormalised
// list and r the renormalised tail, H = m·h + (1−m)·H(r) + H₂(m), and since
// every tail token is at most as likely as the list's last, H ≥ h − ln m.
func entropy(cs []Candidate) (h, bound, mass float64) {
	// log-sum-exp from the largest, for precision with tiny masses.
	// The first term is exp(top − top) = exp(0), exactly 1: not computed.
	top := min(cs[0].Logprob, 0)
	sum := 1.0
	for i := 1; i < len(cs); i++ {
		sum += math.Exp(min(cs[i].Logprob, 0) - top)
	}
	lse := top + math.Log(sum)
	for i := range cs {
		lq := min(cs[i].Logprob, 0) - lse
		q := math.Exp(lq)
		if q > 0 {
			h -= q * lq
		}
	}
	h = max(h, 0)
	mass = math.Exp(lse)
	// bf16 logprobs can sum to a hair over 1: −ln(mass) is then taken as 0.
	bound = h + max(0, -lse)
	return h, bound, min(mass, 1)
}
