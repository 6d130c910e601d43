package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// A request's origin is its X-Mlx-Origin when the value is known and the
// caller may claim one; anything else is a user's.
func TestOriginRules(t *testing.T) {
	o := newOrigins([]string{"ci"})
	for _, c := range []struct {
		name, header, client, want string
		forwarded                  []string // a header a reverse proxy adds
	}{
		{"no header", "", ClientLocal, OriginUser, nil},
		{"loopback judge", "judge", ClientLocal, OriginJudge, nil},
		{"loopback probe", "probe", ClientLocal, OriginProbe, nil},
		{"keyed bench", "bench", "ci-runner", OriginBench, nil},
		{"configured origin", "ci", ClientLocal, "ci", nil},
		{"case and spaces", "  Judge ", ClientLocal, OriginJudge, nil},
		{"unknown value is a user", "admin", ClientLocal, OriginUser, nil},
		{"a client's string never mints a value", "judge2", "key", OriginUser, nil},
		{"anonymous remote may not claim", "judge", ClientAnonymous, OriginUser, nil},
		{"caller not known", "judge", "", OriginUser, nil},
		{"explicit user", "user", ClientLocal, OriginUser, nil},
		{"relayed by a local reverse proxy", "judge", ClientLocal, OriginUser, []string{"X-Forwarded-For", "203.0.113.7"}},
		{"relayed, Forwarded", "probe", ClientLocal, OriginUser, []string{"Forwarded", "for=203.0.113.7"}},
		{"relayed with a key", "bench", "ci-runner", OriginUser, []string{"X-Forwarded-For", "127.0.0.1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
			if c.header != "" {
				r.Header.Set(OriginHeader, c.header)
			}
			if c.forwarded != nil {
				r.Header.Set(c.forwarded[0], c.forwarded[1])
			}
			assert.Equal(t, c.want, o.of(r, caller{client: c.client}))
		})
	}
}

func TestTrafficOriginsValidate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TrafficOrigins = []string{"ci", "judge", "Bad-Name", "ci"}
	err := cfg.Validate()
	require.Error(t, err)
	for _, want := range []string{`"judge" is given twice or is built in`, `"Bad-Name" must be`, `"ci" is given twice`} {
		assert.ErrorContains(t, err, want)
	}
	cfg.TrafficOrigins = []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}
	assert.ErrorContains(t, cfg.Validate(), "traffic_origins: at most 8")
	cfg.TrafficOrigins = []string{"ci_nightly"}
	assert.NoError(t, cfg.Validate())
}

// The judge's requests are counted under origin="judge", never scored, and
// never get logprobs injected: the user series, the "last answer" gauges
// and the quality gauges stay as the users' requests left them.
func TestJudgeTrafficIsApart(t *testing.T) {
	r := newRig(t)
	user := `{"model":"` + testModel + `","messages":[{"role":"user","content":"Name three rivers."}],"max_tokens":24,"temperature":0.7}`
	require.Equal(t, http.StatusOK, r.post("/v1/chat/completions", user).status)
	before := r.scrape()

	judge := `{"model":"` + testModel + `","messages":[{"role":"user","content":"Grade this answer as JSON, a long prompt to change the context gauges."}],"max_tokens":40,"temperature":0}`
	resp := r.do(r.url, http.MethodPost, "/v1/chat/completions", judge, OriginHeader, OriginJudge, NoTraceHeader, "0")
	require.Equal(t, http.StatusOK, resp.status)
	assert.NotContains(t, string(resp.body), `"logprobs": {`, "nothing injected, nothing to strip")
	after := r.scrape()

	for _, labels := range [][]string{{"origin", OriginUser, "streaming", "false", "kind", KindChat}} {
		assert.Equal(t, value(t, before, "mlx_requests_total", labels...), value(t, after, "mlx_requests_total", labels...), "user requests")
	}
	assert.Equal(t, 1.0, value(t, after, "mlx_requests_total", "origin", OriginJudge, "streaming", "false", "kind", KindChat))
	assert.Positive(t, value(t, after, "mlx_tokens_completion_total", "origin", OriginJudge))
	assert.Equal(t, uint64(1), histogramCount(after, "mlx_generation_seconds", OriginJudge))
	// Every series without an origin label (the "last answer" gauges, the
	// quality gauges, counters and histograms of scoring) is as the user's
	// request left it; mlx_client_* count callers, whatever their origin.
	for name, f := range before.Families {
		if strings.HasPrefix(name, "mlx_client_") || hasLabel(f, "origin") {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName(), l.GetValue())
			}
			if m.Histogram != nil {
				assert.Equal(t, m.GetHistogram().GetSampleCount(), histogramCountOf(after.Families[name], labels), "%s%v moved", name, labels)
				continue
			}
			assert.Equal(t, sampleValue(m), value(t, after, name, labels...), "%s%v moved for the judge's request", name, labels)
		}
	}
	assert.Equal(t, value(t, before, "mlx_confidence_scored_total", "source", "injected"), value(t, after, "mlx_confidence_scored_total", "source", "injected"))
}

func hasLabel(f *dto.MetricFamily, name string) bool {
	for _, m := range f.GetMetric() {
		if labelValue(m, name) != "" {
			return true
		}
	}
	return false
}

// histogramCount is the count of a request histogram's series of origin.
func histogramCount(sc *promtext.Scrape, name, origin string) uint64 {
	return histogramCountOf(sc.Families[name], []string{"origin", origin})
}

// histogramCountOf is the count of the family's series with these labels
// (name, value pairs; others may be there too).
func histogramCountOf(f *dto.MetricFamily, labels []string) uint64 {
	var n uint64
	for _, m := range f.GetMetric() {
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && labelValue(m, labels[i]) == labels[i+1]
		}
		if match {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}
