package perf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shape is the engine behind the proxy as the proxy sees it on the wire,
// and the collector's setting that goes with it.
type Shape struct {
	// Key names the shape on the command line (-shapes).
	Key string
	// Suffix follows the collector's row name in the tables ("" for the
	// default shape, the path users take).
	Suffix string
	// StreamLogprobs: the engine sends logprobs in stream chunks when
	// asked. mlx_lm v0.31.3 does not (server.py, handle_completion: the
	// streamed generate_response calls pass none).
	StreamLogprobs bool
	// Env is the collector's environment for the shape, after the run's.
	Env []string
	// About says what the rows of the shape measure, for the table's head.
	About string
}

var (
	// ShapeMLXLM is mlx_lm 0.31.3, what users run: streams without
	// logprobs, and the shipped config as it is, whose
	// confidence.destream_fraction (5 %, config/mlx.yaml) runs that share
	// of the streams non-streamed with top-3 logprobs and re-emits them as
	// SSE; non-streamed answers get top-3 logprobs injected and stripped.
	ShapeMLXLM = Shape{Key: "mlx_lm", About: "behind mlx_lm 0.31.3's wire (streams carry no logprobs; the shipped 5 % of streams destreamed and scored)"}
	// ShapeStreamLogprobs is an engine that streams logprobs in its chunks
	// (mlxsim --sim-stream-logprobs), with destreaming off as config/mlx.yaml
	// says to set it behind one: every stream is scored from its chunks,
	// which are stripped. docs/performance.md's figures before 2026-12-07
	// were measured this way.
	ShapeStreamLogprobs = Shape{
		Key: "stream-logprobs", Suffix: ", engine streams logprobs", StreamLogprobs: true,
		Env:   []string{"MLX_LOGPROBS_STREAM_SAMPLE=0"},
		About: "behind an engine that streams them (every stream scored from its chunks, destreaming off)",
	}
)

// Shapes are the shapes -shapes may name, in the order rows print.
var Shapes = []Shape{ShapeMLXLM, ShapeStreamLogprobs}

// ParseShapes reads -shapes: a comma-separated list of shape keys.
func ParseShapes(v string) ([]Shape, error) {
	var out []Shape
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		found := false
		for _, s := range Shapes {
			if s.Key == k {
				out, found = append(out, s), true
			}
		}
		if !found {
			return nil, fmt.Errorf("-shapes: no shape %q (there are %s and %s)", k, ShapeMLXLM.Key, ShapeStreamLogprobs.Key)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-shapes: none given")
	}
	return out, nil
}

// KeepConcurrency keeps only the Cells of the given concurrencies
// (-concurrency 16: a longer look at one load).
func KeepConcurrency(v string) error {
	var keep []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-concurrency: %q is not a number", f)
		}
		keep = append(keep, n)
	}
	kept := slices.DeleteFunc(slices.Clone(Cells), func(c Cell) bool { return !slices.Contains(keep, c.Concurrency) })
	if len(kept) == 0 {
		return fmt.Errorf("-concurrency: none of %v is a load of the table (1, 16, 64)", keep)
	}
	Cells = kept
	return nil
}
