package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
)

func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mlxbench compare [--json] A.json B.json\n\nB against A: Δ = B − A; 'better'/'worse' when the change is over 5%.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return 2
	}
	a, _, err := bench.ReadReport(fs.Arg(0))
	if err == nil {
		var b *bench.Report
		if b, _, err = bench.ReadReport(fs.Arg(1)); err == nil {
			rows, notes := bench.Compare(a, b)
			if *asJSON {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return exitOn(enc.Encode(map[string]any{"a": fs.Arg(0), "b": fs.Arg(1), "rows": jsonRows(rows), "notes": notes}), stderr)
			}
			bench.WriteCompare(stdout, fs.Arg(0), fs.Arg(1), rows, notes)
			return 0
		}
	}
	fmt.Fprintln(stderr, "mlxbench compare:", err)
	return 1
}

// jsonRows replaces NaN (no percentage against 0), which JSON cannot hold.
func jsonRows(rows []bench.CompareRow) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		m := map[string]any{"level": r.Level, "metric": r.Metric, "unit": r.Unit, "a": r.A, "b": r.B, "delta": r.Delta, "verdict": r.Verdict(5)}
		if r.DeltaPct == r.DeltaPct {
			m["delta_pct"] = r.DeltaPct
		}
		out[i] = m
	}
	return out
}

func exitOn(err error, stderr io.Writer) int {
	if err != nil {
		fmt.Fprintln(stderr, "mlxbench:", err)
		return 1
	}
	return 0
}
