package bench

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Arrival processes of an open-loop run.
const (
	// Poisson: exponential gaps, as real independent users arrive (and as
	// vLLM's benchmark_serving and k6's arrival-rate executors send).
	Poisson = "poisson"
	// Uniform: one request every 1/rate exactly.
	Uniform = "uniform"
)

// Schedule returns the start offsets of an open-loop run at rate requests
// per second for dur: the first at 0, none at or after dur, at most max
// (0 = no count limit). Poisson gaps come from a PCG seeded with seed, so a
// run can be repeated request for request.
func Schedule(arrival string, rate float64, dur time.Duration, max int, seed uint64) ([]time.Duration, error) {
	if rate <= 0 {
		return nil, fmt.Errorf("rate must be positive, not %v", rate)
	}
	if dur <= 0 && max <= 0 {
		return nil, fmt.Errorf("an open-loop run needs a duration or a request count")
	}
	var rng *rand.Rand
	switch arrival {
	case Uniform:
	case Poisson:
		rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	default:
		return nil, fmt.Errorf("unknown arrival process %q (poisson or uniform)", arrival)
	}
	var out []time.Duration
	t := 0.0 // seconds
	for i := 0; ; i++ {
		if max > 0 && len(out) >= max {
			break
		}
		if i > 0 {
			if rng == nil {
				t = float64(i) / rate
			} else {
				t += rng.ExpFloat64() / rate
			}
		}
		at := time.Duration(t * float64(time.Second))
		if dur > 0 && at >= dur {
			break
		}
		out = append(out, at)
	}
	return out, nil
}
