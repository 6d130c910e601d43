package bench

import (
	"math"
	"slices"
)

// Pcts is a distribution in one unit (milliseconds for latencies, tokens
// per second for rates): the count, mean, max and the percentiles every
// level reports.
type Pcts struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Percentile is the p-th percentile (0..100) of sorted values with linear
// interpolation between the closest ranks: numpy's default, which vLLM's
// benchmark_serving uses, so figures compare with its reports. Empty input
// gives NaN.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n == 1 || p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	rank := p / 100 * float64(n-1)
	lo := int(math.Floor(rank))
	frac := rank - float64(lo)
	if lo+1 >= n {
		return sorted[n-1]
	}
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}

// Distribution summarises values (any order; NaNs are dropped). An empty
// input gives a zero Pcts with N 0, which reports and tables show as "-".
func Distribution(values []float64) Pcts {
	s := make([]float64, 0, len(values))
	sum := 0.0
	for _, v := range values {
		if math.IsNaN(v) {
			continue
		}
		s = append(s, v)
		sum += v
	}
	if len(s) == 0 {
		return Pcts{}
	}
	slices.Sort(s)
	return Pcts{
		N:    len(s),
		Mean: sum / float64(len(s)),
		P50:  Percentile(s, 50),
		P90:  Percentile(s, 90),
		P95:  Percentile(s, 95),
		P99:  Percentile(s, 99),
		Max:  s[len(s)-1],
	}
}

// Get returns the named statistic ("p50", "p99", "mean", ...), for tables
// and plots that pick one by name.
func (p Pcts) Get(name string) float64 {
	switch name {
	case "mean":
		return p.Mean
	case "p50":
		return p.P50
	case "p90":
		return p.P90
	case "p95":
		return p.P95
	case "p99":
		return p.P99
	case "max":
		return p.Max
	}
	return math.NaN()
}
