package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

const exposition = `# HELP mlx_in_flight Completion requests in progress.
# TYPE mlx_in_flight gauge
mlx_in_flight{model="m"} 3
# TYPE mlx_kv_cache_bytes gauge
mlx_kv_cache_bytes{type="user"} 1e+07
mlx_kv_cache_bytes{type="assistant"} 2e+07
# TYPE mlx_server_restarts_total counter
mlx_server_restarts_total 2
# TYPE mlx_ttft_seconds histogram
mlx_ttft_seconds_bucket{le="1"} 4
mlx_ttft_seconds_bucket{le="+Inf"} 5
mlx_ttft_seconds_sum 3.5
mlx_ttft_seconds_count 5
# TYPE go_goroutines gauge
go_goroutines 42
`

func TestFlatten(t *testing.T) {
	sc, err := promtext.Parse([]byte(exposition))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		families []string
		want     map[string]float64
	}{
		{[]string{"mlx_in_flight", "mlx_server_restarts_total"}, map[string]float64{`mlx_in_flight{model="m"}`: 3, "mlx_server_restarts_total": 2}},
		{[]string{"mlx_kv_*"}, map[string]float64{`mlx_kv_cache_bytes{type="assistant"}`: 2e7, `mlx_kv_cache_bytes{type="user"}`: 1e7}},
		{[]string{"mlx_ttft_seconds"}, map[string]float64{"mlx_ttft_seconds": 5}},
		{[]string{"absent"}, map[string]float64{}},
	} {
		if got := Flatten(sc, tc.families); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: got %v", tc.families, got)
		}
	}
	if n := len(Flatten(sc, nil)); n != 6 {
		t.Errorf("all families: %d series", n)
	}
	if SeriesFamily(`mlx_in_flight{model="m"}`) != "mlx_in_flight" {
		t.Error("SeriesFamily")
	}
}

// A source that is down is recorded as an error and does not stop the
// others; the snapshotter scrapes at start, on its interval, and at the end.
func TestSnapshotter(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(exposition))
	}))
	defer up.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	s := &Snapshotter{
		Sources:  []SnapshotSource{{"proxy", up.URL}, {"kv", down.URL}},
		Families: DefaultSnapshotFamilies,
		Interval: 50 * time.Millisecond,
		Rec:      NewRecorder(),
		Level:    func() int { return 2 },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Millisecond)
	defer cancel()
	s.Run(ctx)
	snaps := s.Snapshots()
	if len(snaps) < 6 || len(snaps)%2 != 0 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	for _, sn := range snaps {
		switch sn.Source {
		case "proxy":
			if sn.Err != "" || sn.Series[`mlx_in_flight{model="m"}`] != 3 || sn.Level != 2 {
				t.Errorf("proxy %+v", sn)
			}
		case "kv":
			if sn.Err == "" || sn.Series != nil {
				t.Errorf("kv %+v", sn)
			}
		}
	}
}
