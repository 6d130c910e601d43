package supervisorreceiver

import "time"

// backoffFor is the wait before restart number n (1-based) of a run of
// crashes: initial, doubling each time, capped at max.
func backoffFor(n int, initial, max time.Duration) time.Duration {
	d := initial
	for i := 1; i < n; i++ {
		d *= 2
		if d >= max {
			return max
		}
	}
	if d > max {
		return max
	}
	return d
}
