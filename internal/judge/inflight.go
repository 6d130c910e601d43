package judge

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ScrapeInFlight reads mlx_in_flight, summed over its models, from the
// proxy's /metrics (metricsURL): how cmd/mlxjudge, outside the collector,
// knows the proxy is busy. A target without the series is never busy.
// token, when set, is sent as a bearer token (the proxy's
// metrics_bearer_token).
func ScrapeInFlight(hc *http.Client, metricsURL, token string) func() (int64, error) {
	return func() (int64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
		if err != nil {
			return 0, err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("%s: %s", metricsURL, resp.Status)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", metricsURL, err)
		}
		var n float64
		if f := fams["mlx_in_flight"]; f != nil {
			for _, m := range f.GetMetric() {
				n += m.GetGauge().GetValue()
			}
		}
		return int64(n), nil
	}
}
