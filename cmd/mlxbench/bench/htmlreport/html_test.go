package htmlreport

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mlxbench/bench"
)

func syntheticSweep() (*bench.Report, []bench.Sample) {
	var samples []bench.Sample
	var levels []bench.Level
	for i, c := range []int{1, 2, 4} {
		var ls []bench.Sample
		for n := range 6 {
			ls = append(ls, bench.Sample{Level: i, Stream: true, SchedUS: int64(i*10+n) * 1e6, SentUS: int64(i*10+n) * 1e6,
				TTFTUS: int64(800_000 + 50_000*c + 1000*n), E2EUS: int64(1_800_000 + 80_000*c), ITLUS: []int64{15_400, 15_500}, OutputTokens: 66})
		}
		ls = append(ls, bench.Sample{Level: i, Stream: true, SchedUS: int64(i*10+7) * 1e6, E2EUS: 120e6, Cause: bench.CauseTimeout})
		samples = append(samples, ls...)
		levels = append(levels, bench.Level{Name: "c=" + string(rune('0'+c)), Mode: "sweep", Concurrency: c, Stream: true, Summary: bench.Summarize(ls, bench.SummaryOptions{})})
	}
	r := &bench.Report{Schema: bench.ReportSchema, Kind: "load", Label: "t", Started: time.Unix(0, 0), Finished: time.Unix(30, 0), Levels: levels,
		Snapshots: []bench.Snapshot{
			{TS: 0, Source: "proxy", Series: map[string]float64{`mlx_in_flight{model="m"}`: 0}},
			{TS: 5, Source: "proxy", Series: map[string]float64{`mlx_in_flight{model="m"}`: 4}},
			{TS: 5, Source: "kv", Err: "connection refused"},
		}}
	return r, samples
}

func TestFigures(t *testing.T) {
	r, samples := syntheticSweep()
	figs, err := Figures(r, samples)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range figs {
		ids = append(ids, f.ID)
		img, err := png.Decode(bytes.NewReader(f.PNG))
		if err != nil || img.Bounds().Dx() < 600 || img.Bounds().Dy() < 300 {
			t.Errorf("%s: %v %v", f.ID, err, img.Bounds())
		}
	}
	if got := strings.Join(ids, " "); got != "ttft latency throughput requests ttft-distribution latency-over-time snapshot-mlx_in_flight" {
		t.Errorf("figures %s", got)
	}
	// No snapshots, no samples: only the level plots.
	r.Snapshots = nil
	figs, _ = Figures(r, nil)
	if len(figs) != 4 {
		t.Errorf("%d figures without samples and snapshots", len(figs))
	}
}

func TestRender(t *testing.T) {
	r, samples := syntheticSweep()
	b, err := Render(r, samples)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		`<img class="plot" id="fig-ttft" src="data:image/png;base64,`,
		"<td>c=4</td>", "timeout 1", "kv: 1 failed (last: connection refused)", "3 scrapes of the distribution",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") && strings.Contains(page, "<link") {
		t.Error("the page must be self-contained, without scripts or links")
	}
	if PathFor("bench-reports/a-1.json") != "bench-reports/a-1.html" {
		t.Error("PathFor")
	}
}
