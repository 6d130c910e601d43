package proxy

import "github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"

// strictKept: every kept value is what a strict read of it keeps: null,
// nil, or a JSON object the reader reads whole.
func strictKept(kept [][]byte) bool {
	for _, v := range kept {
		if len(v) == 0 || string(v) == "null" {
			continue
		}
		r := jsonedit.Reader{B: v}
		if v[0] != '{' || !r.Skip() || r.I != len(v) {
			return false
		}
	}
	return true
}
