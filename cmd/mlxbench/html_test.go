package main

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// A report can be drawn again from its JSON alone, and its plots written
// as PNG files (how docs/ got its images).
func TestHTMLFromReport(t *testing.T) {
	sim := startSim(t, mlxsim.Options{PrefillTPS: 1e5, DecodeTPS: 2000})
	dir := t.TempDir()
	if res := runCmd(t, context.Background(), append([]string{"load", "--base-url", sim.URL, "--sweep", "1,2", "--max-requests", "3", "--settle", "0"}, quiet(dir)...)...); res.code != 0 {
		t.Fatalf("%+v", res)
	}
	path, _, _ := onlyReport(t, dir)
	pngs := filepath.Join(dir, "png")
	res := runCmd(t, context.Background(), "html", "--png-dir", pngs, "--png-prefix", "sweep-", path)
	if res.code != 0 {
		t.Fatalf("%+v", res)
	}
	if _, err := os.Stat(strings.TrimSuffix(path, ".json") + ".html"); err != nil {
		t.Error(err)
	}
	files, _ := filepath.Glob(filepath.Join(pngs, "sweep-*.png"))
	if len(files) < 5 {
		t.Fatalf("pngs %v", files)
	}
	for _, f := range files {
		r, _ := os.Open(f)
		if _, err := png.Decode(r); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		r.Close()
	}
	if res := runCmd(t, context.Background(), "html", filepath.Join(dir, "missing.json")); res.code != 1 {
		t.Errorf("missing report: exit %d", res.code)
	}
}
