package judge

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sync"
	"time"
	"unicode/utf8"
)

// The origins of a request through the proxy (the span attribute
// mlx.origin): a user's, the judge's own, the supervisor's or a
// probe's, mlxbench's.
const (
	OriginUser  = "user"
	OriginJudge = "judge"
	OriginProbe = "probe"
	OriginBench = "bench"
)

// AnyOrigin in Filter.Origins takes every origin.
const AnyOrigin = "*"

// Filter is which traces the judge looks at, as an Opik online evaluation
// rule's filters: the model, the origin, the answer's length. A trace
// that does not pass is counted filtered and not judged.
type Filter struct {
	// Models are the request models judged; empty: any. A request that
	// named no model matches "default_model" (mlx_lm's name for the model
	// it serves).
	Models []string
	// Origins are the mlx.origin values judged ("*": any). A trace
	// without the attribute (another client's, or a proxy from before
	// it) counts as a user's.
	Origins []string
	// MinAnswerChars: answers shorter (in characters) are not judged.
	MinAnswerChars int
}

// pass says whether c passes the filter.
func (f Filter) pass(c *Candidate) bool {
	if len(f.Models) > 0 {
		m := c.Model
		if m == "" {
			m = "default_model"
		}
		if !slices.Contains(f.Models, m) {
			return false
		}
	}
	if len(f.Origins) > 0 && !slices.Contains(f.Origins, AnyOrigin) {
		o := c.Origin
		if o == "" {
			o = OriginUser
		}
		if !slices.Contains(f.Origins, o) {
			return false
		}
	}
	return utf8.RuneCountInString(c.Answer) >= f.MinAnswerChars
}

// sampled says whether a trace is in the sample: a fixed function of its
// key, so that every pass (and mlxjudge, and a restarted collector) makes
// the same choice about the same trace, as Opik's sampling_rate does per
// trace.
func sampled(key string, rate float64) bool {
	if rate >= 1 {
		return true
	}
	if rate <= 0 {
		return false
	}
	h := sha256.Sum256([]byte(key)) // FNV's high bits barely move between short keys
	return float64(binary.BigEndian.Uint64(h[:8])>>11)/(1<<53) < rate
}

// rateLimit allows at most max judgements in any minute: it keeps the
// times of the last max, so its memory is bounded by max whatever comes.
type rateLimit struct {
	mu    sync.Mutex
	times []time.Time // oldest first, at most max
}

// allow reports whether a judgement may start at now, and counts it if so.
func (r *rateLimit) allow(max int, now time.Time) bool {
	if max <= 0 {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.times) >= max {
		if now.Sub(r.times[len(r.times)-max]) < time.Minute {
			return false
		}
		r.times = r.times[len(r.times)-max+1:]
	}
	r.times = append(r.times, now)
	return true
}
