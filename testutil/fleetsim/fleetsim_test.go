package fleetsim

import (
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
)

// Every synthetic series has the label set its component documents (its
// metadata.yaml, which the e2e doc tests hold to a scrape of the built
// collector), plus the scrape's job and instance: the fleet views are
// tested on series shaped as the collector emits them.
func TestSeriesAreShapedAsDocumented(t *testing.T) {
	files, _ := filepath.Glob("../../*/*/metadata.yaml")
	require.NotEmpty(t, files)
	documented := map[string][][]string{} // name -> label sets
	for _, f := range files {
		c, err := mdschema.Load(f)
		require.NoError(t, err, f)
		for _, e := range c.Metrics {
			l := c.Labels(e.Value)
			if !slices.Contains(l, "node") {
				l = append(l, "node") // the fleet contract stamps node on every series of every port
			}
			sort.Strings(l)
			documented[e.Key] = append(documented[e.Key], l)
		}
	}
	end := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	lines := Series(end)
	require.NotEmpty(t, lines)
	for _, l := range lines {
		name := l.Metric["__name__"]
		var got []string
		for k := range l.Metric {
			if k != "__name__" && k != "job" && k != "instance" {
				got = append(got, k)
			}
		}
		sort.Strings(got)
		sets, ok := documented[name]
		if !assert.True(t, ok, "%s is documented by no metadata.yaml", name) {
			continue
		}
		assert.Contains(t, sets, got, "%s: labels %v", name, got)
		assert.Equal(t, len(l.Values), len(l.Timestamps), name)
	}
}

// The incidents are where the package says: node03's series stop DarkAgo
// before the end, the others run to it.
func TestIncidents(t *testing.T) {
	end := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, l := range Series(end) {
		last := time.UnixMilli(l.Timestamps[len(l.Timestamps)-1])
		if l.Metric["node"] == "node03" {
			assert.True(t, last.Before(end.Add(-DarkAgo)), "%v ends before node03 goes dark", l.Metric)
		} else {
			assert.True(t, end.Equal(last), "%v runs to the end", l.Metric)
		}
	}
}
