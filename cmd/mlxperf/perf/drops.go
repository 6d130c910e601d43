package perf

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
)

// Drops are the proxy's counts of telemetry it shed (its /metrics): a
// full scoring queue (the answer's span then goes without scores), and
// spans and access records its bounded queues could not take. Throughput
// with telemetry means little where most of it was dropped.
type Drops struct{ Scoring, Spans, Access float64 }

// Sub is d less an earlier reading.
func (d Drops) Sub(e Drops) Drops {
	return Drops{d.Scoring - e.Scoring, d.Spans - e.Spans, d.Access - e.Access}
}

// ReadDrops scrapes base/metrics; zero when it cannot.
func ReadDrops(client *http.Client, base string) Drops {
	var d Drops
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		return d
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var into *float64
		switch {
		case strings.HasPrefix(line, "mlx_scoring_dropped_total"):
			into = &d.Scoring
		case strings.HasPrefix(line, "mlx_spans_dropped_total"):
			into = &d.Spans
		case strings.HasPrefix(line, "mlx_access_log_dropped_total"):
			into = &d.Access
		default:
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				*into += v
			}
		}
	}
	return d
}
