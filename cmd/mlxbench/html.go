package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench/htmlreport"
)

// runHTML redraws a report's HTML page from its JSON (samples included),
// and can write the plots as PNG files, which is how docs/ got its images.
func runHTML(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("html", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "HTML file (default: beside the report, .html)")
	pngDir := fs.String("png-dir", "", "also write each plot as <png-dir>/<png-prefix><plot>.png")
	pngPrefix := fs.String("png-prefix", "", "file name prefix of the PNGs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: mlxbench html [--out FILE] [--png-dir DIR] REPORT.json")
		return 2
	}
	r, samples, err := bench.ReadReport(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "mlxbench html:", err)
		return 1
	}
	path := *out
	if path == "" {
		path = htmlreport.PathFor(fs.Arg(0))
	}
	if err := htmlreport.Write(path, r, samples); err != nil {
		fmt.Fprintln(stderr, "mlxbench html:", err)
		return 1
	}
	fmt.Fprintln(stdout, "html:", path)
	if *pngDir != "" {
		figs, err := htmlreport.Figures(r, samples)
		if err == nil {
			err = os.MkdirAll(*pngDir, 0o755)
		}
		var paths []string
		if err == nil {
			paths, err = htmlreport.WritePNGs(*pngDir, *pngPrefix, figs)
		}
		for _, p := range paths {
			fmt.Fprintln(stdout, "png: ", p)
		}
		if err != nil {
			fmt.Fprintln(stderr, "mlxbench html:", err)
			return 1
		}
	}
	return 0
}
