package proxy

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

const openMetricsAccept = "application/openmetrics-text;version=1.0.0;q=0.9,text/plain;version=0.0.4;q=0.5"

// By default every scraper gets the classic text format, whatever it asks
// for: OpenMetrics would change the bucket bounds' le values for a
// Prometheus 2 that already stores them.
func TestOpenMetricsIsOptIn(t *testing.T) {
	r := rigAfterAStream(t)
	om := r.do(r.url, http.MethodGet, "/metrics", "", "Accept", openMetricsAccept)
	require.Equal(t, http.StatusOK, om.status)
	assert.True(t, strings.HasPrefix(om.header.Get("Content-Type"), "text/plain; version=0.0.4"), om.header.Get("Content-Type"))
	assert.NotContains(t, string(om.body), "# UNIT")
	assert.Contains(t, string(om.body), `mlx_ttft_seconds_bucket{model="mlx-community/Qwen3-4B-4bit",node="`+fleet.NodeName("")+`",origin="user",le="1"}`, "le as the classic text writes it")
}

// With metrics_open_metrics, a scraper that asks for OpenMetrics
// (Prometheus does) gets metadata.yaml's units in Prometheus' words, on the
// families whose names end with them; one that asks for the classic text
// format (VictoriaMetrics) gets the same series with no units. Prometheus'
// own OpenMetrics parser accepts the scrape.
func TestOpenMetricsScrapeShowsUnits(t *testing.T) {
	r := rigAfterAStream(t, func(c *Config, _ *mlxsim.Options) { c.MetricsOpenMetrics = true })
	om := r.do(r.url, http.MethodGet, "/metrics", "", "Accept", openMetricsAccept)
	require.Equal(t, http.StatusOK, om.status)
	assert.True(t, strings.HasPrefix(om.header.Get("Content-Type"), "application/openmetrics-text"), om.header.Get("Content-Type"))
	// What metadata.yaml says each family served shows: its unit in
	// OpenMetrics' words when the name (less _total) ends with it.
	want := map[string]string{}
	documented := proxyMetadata(t)
	for _, name := range r.scrape().Names() {
		m, ok := documented.Metrics.Get(name)
		require.True(t, ok, "%s is in metadata.yaml", name)
		u, known := openMetricsWords[m.Unit]
		require.True(t, known, "%s's unit %q has its OpenMetrics word in openMetricsWords", name, m.Unit)
		if u != "" && strings.HasSuffix(strings.TrimSuffix(name, "_total"), "_"+u) {
			want[name] = u
		}
	}
	assert.Equal(t, "seconds", want["mlx_ttft_seconds"])
	assert.Equal(t, "per_second", want["mlx_token_rate_tokens_per_second"])
	assert.NotContains(t, want, "mlx_kv_bytes_per_token", "a unit the name does not end with (By) shows none")
	assert.Equal(t, want, unitLines(om.body), "{token}, 1 and a unit the name does not end with show none")

	text := r.do(r.url, http.MethodGet, "/metrics", "")
	require.Equal(t, http.StatusOK, text.status)
	assert.True(t, strings.HasPrefix(text.header.Get("Content-Type"), "text/plain; version=0.0.4"), text.header.Get("Content-Type"))
	assert.NotContains(t, string(text.body), "# UNIT")
	assert.Contains(t, string(text.body), "mlx_ttft_seconds_count{", "the same series")

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not on PATH: Prometheus' parser not run (make stores builds it into bin/)")
		return
	}
	// promtool reads OpenMetrics only to build blocks, and then wants a
	// timestamp on every sample; the scrape is otherwise given as it is.
	in := filepath.Join(t.TempDir(), "scrape.om")
	require.NoError(t, os.WriteFile(in, withTimestamps(om.body, "1700000000"), 0o600))
	out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", in, t.TempDir()).CombinedOutput()
	assert.NoError(t, err, "Prometheus' OpenMetrics parser refused the scrape:\n%s", out)
}

// rigAfterAStream is a rig whose proxy relayed one streamed chat (so the
// histograms have series) and settled.
func rigAfterAStream(t *testing.T, opts ...rigOption) *rig {
	r := newRig(t, opts...)
	require.Equal(t, http.StatusOK, r.post("/v1/chat/completions", benchStream).status)
	settle(r.proxy)
	return r
}

// openMetricsWords are metadata.yaml's units (UCUM) in the words an
// OpenMetrics scrape gives them (otlptranslator's UnitNamer: s is seconds,
// By bytes, {token}/s per_second; an annotation or 1 has none).
var openMetricsWords = map[string]string{"": "", "1": "", "{token}": "", "s": "seconds", "By": "bytes", "{token}/s": "per_second"}

// unitLines returns the `# UNIT name unit` lines of an OpenMetrics scrape.
func unitLines(b []byte) map[string]string {
	units := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "UNIT" {
			units[f[2]] = f[3]
		}
	}
	return units
}

// withTimestamps appends ts to every sample line.
func withTimestamps(b []byte, ts string) []byte {
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line)
			continue
		}
		out.WriteString(strings.TrimSuffix(line, "\n") + " " + ts + "\n")
	}
	return out.Bytes()
}
