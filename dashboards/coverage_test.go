package dashboards

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promqlnames"
)

// unwatchedFile lists the documented mlx_* series that neither an alert
// nor a panel reads, each with the reason.
const unwatchedFile = "unwatched.yml"

// Every mlx_* series a component documents (its metadata.yaml, from which
// its documentation.md is generated) is read by an alert rule or a panel,
// or unwatched.yml says why not; and unwatched.yml names no series that is
// watched or not documented.
func TestEverySeriesHasAnAlertAPanelOrAReason(t *testing.T) {
	// The documented series, and which are histograms (read as _bucket,
	// _sum and _count; a gauge may end in _count itself).
	files, _ := filepath.Glob("../*/*/metadata.yaml")
	documented := map[string]bool{}
	histograms := map[string]bool{}
	for _, f := range files {
		c, err := mdschema.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range c.Metrics {
			if strings.HasPrefix(m.Key, "mlx_") || strings.HasPrefix(m.Key, "gen_ai_") || strings.HasPrefix(m.Key, "vllm:") {
				documented[m.Key] = true
				histograms[m.Key] = m.Value.Histogram != nil
			}
		}
	}
	read := map[string]bool{}
	rules, err := promqlnames.LoadRules("../rules/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	exprs := []string{}
	for _, r := range rules {
		exprs = append(exprs, r.Expr)
	}
	queries, err := promqlnames.LoadDashboardQueries(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		if e, ok := q.MetricsQL(nil); ok {
			exprs = append(exprs, e)
		}
	}
	for _, e := range exprs {
		names, err := promqlnames.Names(e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		for _, n := range names {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(n, suffix); ok && histograms[base] {
					n = base
				}
			}
			read[n] = true
		}
	}
	b, err := os.ReadFile(unwatchedFile)
	if err != nil {
		t.Fatal(err)
	}
	var unwatched map[string]string
	if err := yaml.Unmarshal(b, &unwatched); err != nil {
		t.Fatalf("%s: %v", unwatchedFile, err)
	}
	var missing []string
	for n := range documented {
		if !read[n] && strings.TrimSpace(unwatched[n]) == "" {
			missing = append(missing, n)
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("%s: no alert and no panel reads it; add one, or a reason in %s", m, unwatchedFile)
	}
	for n := range unwatched {
		switch {
		case !documented[n]:
			t.Errorf("%s lists %s, which no metadata.yaml documents", unwatchedFile, n)
		case read[n]:
			t.Errorf("%s lists %s, which an alert or a panel reads: take it out", unwatchedFile, n)
		}
	}
}
